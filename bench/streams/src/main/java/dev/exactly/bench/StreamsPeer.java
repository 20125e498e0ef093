package dev.exactly.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Produced;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka Streams EOS-v2 peer of the benchmark: input topic to output topic, keys kept, values
 * unchanged (identity) or enriched ({@link PaymentEnricher}), under exactly_once_v2 with Kafka
 * Streams' defaults for everything the benchmark does not set.
 *
 * <p>Prints "streams-peer: running" once the client reaches RUNNING. SIGTERM or SIGINT closes it
 * (30 s at most) and exits 0; a stream thread's uncaught exception shuts the client down and exits 1.
 */
public final class StreamsPeer {
  private static final Logger log = LoggerFactory.getLogger(StreamsPeer.class);

  static final String USAGE =
      "usage: StreamsPeer --bootstrap HOST:PORT --input TOPIC --output TOPIC --group APP_ID"
          + " --transform identity|payment-enricher --commit-interval-ms N";

  private static final String[] OPTIONS = {
    "--bootstrap", "--input", "--output", "--group", "--transform", "--commit-interval-ms"
  };

  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

  private StreamsPeer() {}

  /** Parsed command line; null (after printing the usage line) when it is not valid. */
  static Map<String, String> parseArgs(String[] args) {
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      String name = args[i];
      boolean known = false;
      for (String option : OPTIONS) {
        known |= option.equals(name);
      }
      if (!known) {
        return usage("unknown argument '" + name + "'");
      }
      if (i + 1 >= args.length) {
        return usage(name + " needs a value");
      }
      if (values.put(name, args[i + 1]) != null) {
        return usage(name + " given twice");
      }
    }
    for (String option : OPTIONS) {
      if (!values.containsKey(option)) {
        return usage("missing " + option);
      }
    }
    String transform = values.get("--transform");
    if (!transform.equals("identity") && !transform.equals(PaymentEnricher.NAME)) {
      return usage("unknown transform '" + transform + "'");
    }
    try {
      if (Long.parseLong(values.get("--commit-interval-ms")) < 0) {
        return usage("--commit-interval-ms must be >= 0");
      }
    } catch (NumberFormatException e) {
      return usage("--commit-interval-ms must be an integer");
    }
    return values;
  }

  private static Map<String, String> usage(String problem) {
    System.err.println("streams-peer: " + problem);
    System.err.println(USAGE);
    return null;
  }

  static Topology topology(String input, String output, String transform) {
    StreamsBuilder builder = new StreamsBuilder();
    KStream<byte[], byte[]> stream =
        builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()));
    if (transform.equals(PaymentEnricher.NAME)) {
      PaymentEnricher enricher = new PaymentEnricher();
      stream = stream.mapValues(enricher::apply);
    }
    stream.to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
    return builder.build();
  }

  static Properties config(Map<String, String> args, Path stateDir) {
    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, args.get("--group"));
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("--bootstrap"));
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.parseLong(args.get("--commit-interval-ms")));
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    // The broker's default for internal topics; the topology is stateless, so there are none.
    props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, -1);
    return props;
  }

  public static void main(String[] argv) throws Exception {
    Map<String, String> args = parseArgs(argv);
    if (args == null) {
      System.exit(2);
      return;
    }
    Path stateDir = Files.createTempDirectory("streams-peer-");

    AtomicBoolean printedRunning = new AtomicBoolean();
    AtomicBoolean failed = new AtomicBoolean();
    // Whoever sets `stopping` first (the signal's shutdown hook, or main after a failure) closes
    // the client and decides the exit code; `closed` opens when that close is done. Main starts
    // the client under `lock` only while `stopping` is unset, so the hook, which takes the client
    // under the same lock after setting `stopping`, either closes a started client or none.
    AtomicBoolean stopping = new AtomicBoolean();
    Object lock = new Object();
    AtomicReference<KafkaStreams> started = new AtomicReference<>();
    CountDownLatch closed = new CountDownLatch(1);
    CountDownLatch stopped = new CountDownLatch(1);

    // Registered before the client is built, so a signal during start-up also exits 0.
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  if (!stopping.compareAndSet(false, true)) {
                    // main is closing after a failure: let it finish, then keep its exit code.
                    awaitQuietly(closed);
                    Runtime.getRuntime().halt(1);
                    return;
                  }
                  KafkaStreams streams;
                  synchronized (lock) {
                    streams = started.get();
                  }
                  boolean clean = streams == null || streams.close(CLOSE_TIMEOUT);
                  deleteQuietly(stateDir);
                  closed.countDown();
                  if (!clean) {
                    log.error("close did not finish within {}", CLOSE_TIMEOUT);
                  }
                  System.out.flush();
                  System.err.flush();
                  // The JVM's own status after SIGTERM is 143; a clean stop on a signal is 0.
                  Runtime.getRuntime().halt(clean && !failed.get() ? 0 : 1);
                },
                "streams-peer-shutdown"));

    Topology topology = topology(args.get("--input"), args.get("--output"), args.get("--transform"));
    KafkaStreams streams = new KafkaStreams(topology, config(args, stateDir));
    streams.setStateListener(
        (now, before) -> {
          if (now == KafkaStreams.State.RUNNING && printedRunning.compareAndSet(false, true)) {
            System.out.println("streams-peer: running");
            System.out.flush();
          }
          if (now == KafkaStreams.State.ERROR) {
            failed.set(true);
          }
          if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
            stopped.countDown();
          }
        });
    streams.setUncaughtExceptionHandler(
        e -> {
          log.error("stream thread failed; shutting the client down", e);
          failed.set(true);
          return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });

    synchronized (lock) {
      if (!stopping.get()) {
        started.set(streams);
        streams.start();
      }
    }
    stopped.await(); // never opens when the hook stopped it before the start: the hook halts
    // The client stopped by itself (a failure) or because the shutdown hook closed it.
    if (!stopping.compareAndSet(false, true)) {
      Thread.currentThread().join(); // the hook owns the exit
      return;
    }
    streams.close(CLOSE_TIMEOUT);
    deleteQuietly(stateDir);
    closed.countDown();
    System.err.println("streams-peer: the client stopped after a failure");
    System.exit(1);
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void deleteQuietly(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      log.warn("could not remove the state folder {}: {}", dir, e.toString());
    }
  }
}
