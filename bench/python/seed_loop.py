#!/usr/bin/env python3
"""The seed's loop: the lesson's confluent-kafka read-process-write loop, made runnable.

A peer in the project's benchmark (bench/run.py): it consumes --input under read_committed,
transforms each value, produces to --output and commits its input offsets inside the same Kafka
transaction. With --commit-interval-ms one transaction stays open across consume calls until the
interval since begin_transaction has passed, so it commits at the same cadence as the other peers.

stdout: "seed-loop: running" once the first partition assignment arrives.
Exit: 0 after SIGTERM/SIGINT (the open transaction is committed first), 1 on a Kafka error (the
open transaction is aborted and the error re-raised onto stderr), 2 on bad arguments.
"""
import argparse
import json
import math
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

# --- transforms ------------------------------------------------------------------------------------


def identity(value):
    return value


# payment-enricher, as lib/transforms/payment_enricher.cpp does it with its default config.
CURRENCY = "USD"
MEDIUM_FROM_CENTS = 10000
HIGH_FROM_CENTS = 40000
MAX_DEPTH = 64  # lib/transforms/json_util.h: deeper records are refused
INT64_MAX = 2**63 - 1
EARLIEST_MS = -62167219200000  # 0000-01-01T00:00:00.000Z
LATEST_MS = 253402300799999  # 9999-12-31T23:59:59.999Z


class Rejected(ValueError):
    """A value the C++ transform would refuse; the seed loop passes it through unchanged."""


def _reject_constant(name):
    # Python's json accepts NaN and Infinity; JSON (and nlohmann) does not.
    raise Rejected(f"value is not valid JSON: {name}")


def _nests_deeper_than(text, limit):
    # The byte scan of json_util.cpp's nests_deeper_than.
    depth = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:  # backslash
                escaped = True
            elif c == 0x22:  # quote
                in_string = False
            continue
        if c == 0x22:
            in_string = True
        elif c in (0x7B, 0x5B):  # { [
            depth += 1
            if depth > limit:
                return True
        elif c in (0x7D, 0x5D):  # } ]
            depth -= 1
    return False


def _round_half_away(x):
    # C's round(): halves away from zero (Python's round() takes halves to even).
    a = abs(x)
    f = math.floor(a)
    r = f + 1 if a - f >= 0.5 else f
    return -r if x < 0 else r


def _iso_utc(ms):
    # Days since the epoch to a civil date (H. Hinnant's algorithm), so years 0..9999 all work;
    # Python's datetime stops at year 1.
    days, ms_of_day = divmod(ms, 86_400_000)
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    seconds, millis = divmod(ms_of_day, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return f"{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z"


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def enrich(value):
    """The enriched JSON bytes of one payment event, or Rejected."""
    if value is None:
        raise Rejected("value is null")
    if value.count(b"{") + value.count(b"[") > MAX_DEPTH and _nests_deeper_than(value, MAX_DEPTH):
        raise Rejected(f"value nests deeper than {MAX_DEPTH} levels")
    payment = json.loads(value.decode("utf-8"), parse_constant=_reject_constant)
    if not isinstance(payment, dict):
        raise Rejected("value must be a JSON object")

    if not isinstance(payment.get("payment_id"), str):
        raise Rejected("field 'payment_id' must be a string")
    cents = payment.get("amount_cents")
    if not _is_int(cents):
        raise Rejected("field 'amount_cents' must be an integer")
    if not 0 <= cents <= INT64_MAX:
        raise Rejected("field 'amount_cents' must be >= 0 and fit in 64 bits")
    merchant_id = payment.get("merchant_id")
    if not isinstance(merchant_id, str):
        raise Rejected("field 'merchant_id' must be a string")
    seconds = payment.get("event_time")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise Rejected("field 'event_time' must be a number")
    ms = _round_half_away(float(seconds) * 1000.0)
    if not EARLIEST_MS <= ms <= LATEST_MS:
        raise Rejected("field 'event_time' must fall within the years 0000 to 9999")

    # Assigning an existing key keeps its place, as nlohmann's ordered_json does.
    payment["amount"] = float(cents) / 100.0
    payment["currency"] = CURRENCY
    payment["risk"] = ("low" if cents < MEDIUM_FROM_CENTS
                       else "medium" if cents < HIGH_FROM_CENTS else "high")
    payment["merchant_tier"] = "key" if merchant_id[-1:] in ("0", "5") else "standard"
    payment["event_time_iso"] = _iso_utc(int(ms))
    return json.dumps(payment, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def payment_enricher(value):
    try:
        return enrich(value)
    except (ValueError, TypeError, OverflowError, RecursionError):
        # Rejected, JSONDecodeError, UnicodeError are ValueErrors. The benchmark input is always
        # valid; a bad record is passed through unchanged.
        return value


TRANSFORMS = {"identity": identity, "payment-enricher": payment_enricher}

# --- the loop --------------------------------------------------------------------------------------


def positive_int(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="seed_loop.py",
        description="The seed's confluent-kafka read-process-write loop (exactly-once).")
    parser.add_argument("--bootstrap", required=True, help="HOST:PORT of the brokers")
    parser.add_argument("--input", required=True, help="input topic")
    parser.add_argument("--output", required=True, help="output topic")
    parser.add_argument("--group", required=True, help="consumer group (and transactional.id prefix)")
    parser.add_argument("--transform", required=True, choices=sorted(TRANSFORMS))
    parser.add_argument("--batch", type=positive_int, default=500,
                        help="messages per consume call (default 500)")
    parser.add_argument("--commit-interval-ms", type=positive_int, default=None,
                        help="keep one transaction open this long; without it, one per batch")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    transform = TRANSFORMS[args.transform]
    interval = args.commit_interval_ms / 1000.0 if args.commit_interval_ms else None

    stopping = False

    def on_signal(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    producer = Producer({
        'bootstrap.servers': args.bootstrap,
        'enable.idempotence': True,
        'transactional.id': f'{args.group}-seed',
        'transaction.timeout.ms': 60000,
    })
    consumer = Consumer({
        'bootstrap.servers': args.bootstrap,
        'group.id': args.group,
        'auto.offset.reset': 'earliest',
        'enable.auto.commit': False,
        'isolation.level': 'read_committed',
    })

    in_transaction = False
    offsets = {}
    started = 0.0
    announced = False

    def commit():
        nonlocal in_transaction
        producer.send_offsets_to_transaction(list(offsets.values()),
                                             consumer.consumer_group_metadata())
        producer.commit_transaction()
        in_transaction = False
        offsets.clear()

    def on_assign(consumer_, partitions):
        nonlocal announced
        if not announced:
            announced = True
            print("seed-loop: running", flush=True)

    def on_revoke(consumer_, partitions):
        # A transaction kept open across consume calls (--commit-interval-ms) must not outlive
        # the partitions it read: commit it while the group generation is still ours.
        if in_transaction:
            commit()

    producer.init_transactions()
    consumer.subscribe([args.input], on_assign=on_assign, on_revoke=on_revoke)

    try:
        while not stopping:
            timeout = 1.0
            if in_transaction:
                timeout = max(0.0, min(1.0, started + interval - time.monotonic()))
            messages = consumer.consume(num_messages=args.batch, timeout=timeout)
            if messages:
                if not in_transaction:
                    producer.begin_transaction()
                    in_transaction = True
                    started = time.monotonic()
                for msg in messages:
                    if msg.error():
                        raise KafkaException(msg.error())
                    value = transform(msg.value())
                    while True:
                        try:
                            producer.produce(args.output, key=msg.key(), value=value)
                            break
                        except BufferError:
                            producer.poll(0.05)
                    offsets[(msg.topic(), msg.partition())] = TopicPartition(
                        msg.topic(), msg.partition(), msg.offset() + 1)
            if in_transaction and (interval is None or time.monotonic() - started >= interval):
                commit()
        # SIGTERM/SIGINT: finish the current transaction, then leave the group.
        if in_transaction:
            commit()
        consumer.close()
        producer.flush()
    except BaseException:
        if in_transaction:
            try:
                producer.abort_transaction()
            except KafkaException as abort_error:
                print(f"seed-loop: abort_transaction failed: {abort_error}", file=sys.stderr)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
