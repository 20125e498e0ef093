// The exactly-once loop: consume one partition's records, transform them, produce the outputs and
// the consumed offsets in one transaction of that partition's own producer, commit.
//
// The protocol is DESIGN.md's "transaction protocol": a transactional producer per assigned input
// partition, transactional.id = {prefix}.{input_topic}.{partition}; init_transactions before the
// committed offset is read; one transaction per contiguous range of one partition; abort and
// rewind on abortable errors; re-create the producer on fatal ones; a watchdog; revocation and
// shutdown commit what is open.
//
// With pipeline.producer_scope = "instance" (KIP-447), every partition shares one producer, and
// one transaction holds a range of each partition that has records: the partitions' ranges
// commit together (their offsets in one send_offsets_to_transaction, with the consumer group's
// metadata, which the group coordinator refuses from a member of an older generation: that fences
// a zombie) and abort together (every partition in the transaction rewinds). The producer lives
// as long as the process, across rebalances; a new owner's committed-offset read waits until an
// old owner's transaction holding the partition's offsets is settled (librdkafka asks for stable
// offsets under read_committed).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.h"
#include "engine/emitter.h"
#include "engine/quarantine.h"
#include "engine/triggers.h"
#include "kafka/consumer.h"
#include "kafka/producer.h"
#include "ops/observer.h"
#include "transforms/transform.h"

namespace exactly::engine {

// Process exit codes of `exactly run`.
enum ExitCode : int {
  exit_ok = 0,
  exit_failure = 1,         // a runtime failure: nothing is lost, a restart resumes
  exit_config = 2,          // bad config or start-up refusal
  exit_transform = 3,       // the transform failed under on_error = "fail"
  exit_second_signal = 130  // a second SIGTERM/SIGINT: open transactions aborted
};

struct EngineCounters {
  std::atomic<std::uint64_t> consumed{0};
  std::atomic<std::uint64_t> produced{0};
  std::atomic<std::uint64_t> skipped{0};
  std::atomic<std::uint64_t> dead_lettered{0};
  std::atomic<std::uint64_t> committed{0};      // transactions
  std::atomic<std::uint64_t> aborted{0};        // transactions
  std::atomic<std::uint64_t> producers_recreated{0};
  std::atomic<std::uint64_t> fenced{0};
  std::atomic<std::uint64_t> rebalances{0};
  std::atomic<std::uint64_t> stale_dropped{0};  // records below a partition's position, dropped
};

// The transactional.id of one input partition.
std::string transactional_id(const std::string& prefix, const std::string& input_topic,
                             std::int32_t partition);
// The transactional.id of an instance's producer (producer_scope = "instance"): named by the
// consumer's group.instance.id when static membership is on, so that a restarted instance fences
// its predecessor at once; else by `tag`, random per process.
std::string instance_transactional_id(const std::string& prefix, const std::string& input_topic,
                                      const std::string& group_instance_id, std::uint32_t tag);
// The reason the service stops with when its consumer fails fatally (`described`: the error as
// librdkafka gave it). A static member fenced by its group.instance.id gets what to do about it.
std::string consumer_failure(std::string_view described);

// Client properties as the engine sets them, before the user's (which cannot override the
// framework-owned keys: config validation refuses those).
kafka::Properties consumer_properties(const config::Config& config);
kafka::Properties producer_properties(const config::Config& config);

class Engine final : public kafka::RebalanceHandler {
 public:
  // `transform_version` is named in dead letters (exactly.error.plugin.version). `observer`
  // receives the metrics and health (it must outlive the engine); without one the engine keeps
  // its own, unexposed.
  Engine(const config::Config& config, transforms::Transform& transform,
         std::string transform_version = {}, std::optional<ops::Observer> observer = {});
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs until a signal (the counter goes up), a fatal error or a transform failure. Returns the
  // process exit code.
  int run(const std::atomic<int>& signals);

  [[nodiscard]] const EngineCounters& counters() const { return counters_; }

  // The ids of the transaction attempts this engine aborted (the most recent 100,000), as
  // logged: no output carrying one may ever be read under read_committed.
  [[nodiscard]] std::vector<std::string> aborted_attempts() const;

  // Fault injection for tests: called before each commit with the partition and the range
  // [start, end); returning false aborts the transaction instead, as an abortable error would.
  using CommitHook = std::function<bool(std::int32_t partition, std::int64_t start, std::int64_t end)>;
  void set_commit_hook(CommitHook hook) { commit_hook_ = std::move(hook); }

  std::vector<kafka::PartitionOffset> on_assign(std::span<const std::int32_t> partitions) override;
  void on_revoke(std::span<const std::int32_t> partitions, bool lost) override;

 private:
  using Clock = std::chrono::steady_clock;

  enum class Outcome { committed, aborted, producer_lost };
  using CommitResult = std::pair<Outcome, kafka::Error>;

  struct Partition {
    std::int32_t number = 0;
    // The partition's own producer; in instance scope, the instance's (shared by all).
    std::shared_ptr<kafka::TransactionalProducer> producer;
    std::int64_t position = kafka::offset_invalid;  // next offset to process; invalid: unknown
    bool in_transaction = false;
    std::int64_t range_start = 0;  // first offset of the open transaction's range
    std::int64_t records = 0;
    std::int64_t bytes = 0;
    Clock::time_point opened{};
    // The open transaction's commit interval counts from here: from the start of the last commit
    // when that was less than an interval before the transaction opened (the records that came
    // in while that commit ran have waited since), but no more than half an interval before the
    // opening; else from the opening (less the stagger). Commits start at most once an interval,
    // and with commits shorter than half of it a record waits at most an interval and one
    // commit, not a commit, an interval and another commit.
    Clock::time_point interval_from{};
    Clock::time_point commit_began{};  // the start of the partition's last commit
    bool paused = false;  // waiting out a backoff; rewound to `position` when it ends
    Clock::time_point resume_at{};
    bool needs_producer = false;  // the producer was lost; a new one is made at `reinit_at`
    Clock::time_point reinit_at{};
    // Records of the open range whose output the producer refused after part of it was already
    // produced: the range was aborted, and on the redo they go straight to the failure policy.
    std::map<std::int64_t, std::string> rejected;
    // Crash-loop quarantine (engine/quarantine.h).
    bool tracked = false;  // the marker was read at assignment: a clean stop writes one
    bool quarantine = false;  // records run in small transactions until quarantine_until
    std::int64_t quarantine_start = 0;
    std::int64_t quarantine_until = -1;
    std::int64_t deaths = 0;
    std::optional<std::int64_t> convict;  // the record the last owners died on, running alone
    std::int64_t suspect_written = -1;    // the suspect of the last marker written
    std::int64_t chunk_span = 1;          // and its span: the open transaction's records at most
    std::int64_t chunk = 1;               // records of the next quarantine transaction
    bool grow = false;                    // chunk doubles after each full quarantine transaction
    std::int64_t alone = 0;               // records left to run one per transaction
    std::int64_t prior_suspect = -1;      // the record the last owner died on, running alone
    std::int64_t prior_tries = 0;         // and how often it has been run alone so far
    std::int64_t marker_offset = 0;       // where this owner started: its marker's offset
    bool started_written = false;         // the marker says this owner began processing
    ops::PartitionMetrics metrics;        // this partition's series
    // Records consumed and produced since tick() last added them to the series: the per-record
    // path counts here, not in the shared series.
    std::uint64_t consumed_unreported = 0;
    std::uint64_t produced_unreported = 0;
    std::string attempt;                  // id of the open transaction's attempt
    Clock::duration commit_latency{};     // of the last commit (set by commit_one)
    Clock::duration offsets_latency{};    // the part of it that sent the offsets
    Clock::duration flush_latency{};      // delivering its records, before the commit
    // A commit running on a thread of its own (partition scope, exactly-once): the loop goes on
    // with the other partitions and holds this one's records in `held` until settle().
    std::optional<std::future<CommitResult>> pending;
    Clock::time_point pending_deadline{};
    const char* pending_why = "";
    std::deque<kafka::Message> held;
    std::size_t held_bytes = 0;  // their keys and values
    // Taken off the first transaction's interval, so that the partitions' commits spread over
    // the interval instead of all ending together (and the loop waiting for all of them).
    Clock::duration stagger{};
  };

  // The committed offset the partition's next transaction starts from: a quarantine names its
  // transactions by it (engine/quarantine.h), never by a record's offset.
  static std::int64_t quarantine_from(const Partition& p) {
    return p.position != kafka::offset_invalid ? p.position : p.marker_offset;
  }
  // The marker of an owner that ends alive without a clean stop: its end is not a death.
  Marker alive_marker(const Partition& p) const;

  int startup_checks();
  // The quarantine marker topic exists, or is created now.
  // The admin client's properties: the cluster and the common librdkafka settings.
  [[nodiscard]] kafka::Properties admin_properties() const;
  int ensure_marker_topic();
  // The lineage topic exists, or is created now (as many partitions as the output topic).
  int ensure_lineage_topic();
  // Writes the lineage journal of p's producer's open transaction to the lineage topic and sees
  // it delivered (so that the offsets that follow register no partition: DESIGN.md).
  [[nodiscard]] kafka::Error write_journal(const Partition& p, Clock::time_point deadline);
  // `now`: when the loop polled the record.
  void process(kafka::Message& message, Clock::time_point now);
  // Produces the emitter's outputs; `produced` counts those that went out before any error.
  [[nodiscard]] kafka::Error produce_outputs(Partition& p, const kafka::Message& message,
                                             std::size_t& produced);
  // Applies on_error to a record that cannot be reflected in the output: dead-letters it (in the
  // open transaction), skips it, or stops the pipeline. True when processing goes on.
  bool on_record_failure(Partition& p, const kafka::Message& message, std::string_view error_class,
                         const std::string& reason);
  // Larger than the output topic takes (an estimate a little above librdkafka's own count).
  [[nodiscard]] bool too_large(const BufferedOutput& out, std::int64_t limit) const;
  void tick(Clock::time_point now);
  // Adds p's unreported record counts to its series.
  static void report_counts(Partition& p);
  // Ends the open transactions of `parts` concurrently; each either commits, or is aborted and
  // rewound, or has its producer re-created. `deadline` bounds every call.
  void commit(std::span<Partition* const> parts, Clock::time_point deadline, const char* why);
  // Commits one transaction: the ranges of `ps` (one partition; in instance scope, all of them
  // with records in it). The outcome, and the error behind it unless committed.
  CommitResult commit_one(std::span<Partition* const> ps, const kafka::GroupMetadata& group,
                          Clock::time_point deadline);
  // Applies the outcomes of the commits of `parts` (outcomes[i] is parts[i]'s).
  void settle_outcomes(std::span<Partition* const> parts, std::span<const CommitResult> outcomes,
                       Clock::time_point deadline, const char* why);
  // Starts p's commit on a thread of its own (see Partition::pending); commit() when p's commits
  // run on the loop (a quarantine, no group metadata).
  void commit_async(Partition& p, Clock::time_point deadline, const char* why);
  // Waits for p's pending commit, if any, and applies its outcome. Its held records stay held.
  void settle(Partition& p);
  // Processes p's held records in order, until none is left or a commit is pending again.
  void drain(Partition& p, Clock::time_point now);
  // settle() for every partition; their held records are dropped (the caller gives the
  // partitions away or stops: the records are not committed, so their next owner reads them).
  void settle_all(std::span<Partition* const> parts);
  void settle_every();  // settle_all() for every partition
  // process() for a record of p once nothing of p is pending or held.
  void handle(Partition& p, kafka::Message& message, Clock::time_point now);
  // Aborts the open transactions of `open` (in instance scope, the one they share, once). For
  // each, whether its abort went through.
  std::vector<bool> abort_transactions(std::span<Partition* const> open, Clock::time_point deadline);
  // Aborts p's transaction and schedules a rewind to its range start after the backoff.
  void abort_and_rewind(Partition& p, ops::AbortReason reason, const char* why,
                        Clock::time_point deadline);
  // Drops p's producer after a fatal error; tick() makes a new one and resumes p from its
  // committed offset, unless p turns out not to be ours any more.
  void recreate(Partition& p, const kafka::Error& cause);
  // recreate() in instance scope: the shared producer is dropped, every partition waits for the
  // next one.
  void recreate_instance(const kafka::Error& cause);
  // The second half of recreate(), from tick(): a new producer, the committed offset.
  void reinit(Partition& p);
  // How long making producers and reading committed offsets may take at an assignment.
  [[nodiscard]] Clock::duration start_budget() const;
  // The group's committed offsets, retrying retriable errors until `deadline`.
  [[nodiscard]] kafka::Error committed(std::vector<kafka::PartitionOffset>& offsets,
                                       Clock::time_point deadline);
  // Creates and initialises a producer, retrying retriable errors until `deadline`.
  std::unique_ptr<kafka::TransactionalProducer> make_producer(std::int32_t partition,
                                                              Clock::time_point deadline,
                                                              std::string& error);
  void pause_for_backoff(Partition& p);
  // Reads the markers of these partitions and writes each new owner's marker; sets the
  // partitions' quarantine state. Called from on_assign once their committed offsets are known.
  void start_markers(std::span<Partition* const> parts, Clock::time_point deadline);
  // The result of a marker write. A commit that began and failed (or did not finish) leaves the
  // producer unusable: librdkafka refuses any other transactional call until it is resumed, and
  // only a new producer's init_transactions settles its outcome.
  struct MarkerWrite {
    kafka::Error error;
    bool producer_lost = false;
    explicit operator bool() const { return static_cast<bool>(error); }
  };
  // Writes p's marker (nullopt: a tombstone) in a transaction of its own.
  [[nodiscard]] MarkerWrite write_marker(Partition& p, const std::optional<Marker>& marker,
                                         Clock::time_point deadline);
  // Before record `offset` of a partition in quarantine: the marker naming it, or the end of the
  // quarantine. False when the record must wait (the partition is paused for a retry).
  bool quarantine_step(Partition& p, std::int64_t offset);
  // Before the first record of an owner outside a quarantine: the marker says it began, so that
  // its death from here on is counted. False when the producer was lost.
  bool mark_started(Partition& p);
  // The markers of owners that end: a clean stop (`lost` false) or partitions lost alive.
  void stop_markers(std::span<Partition* const> parts, bool lost, Clock::time_point deadline);
  void abort_all(Clock::time_point deadline);
  std::vector<Partition*> open_transactions();
  int shutdown(const std::atomic<int>& signals, int code);
  // A second signal: stop retrying, abort, exit.
  [[nodiscard]] bool hard_stop() const { return signals_ != nullptr && signals_->load() > 1; }
  // Calls `call(timeout)` (a transactional call, given the time it may take) until it does not
  // fail retriably, the deadline passes or a hard stop comes, pausing between tries. Each retry
  // counts in exactly_errors_total{kind="retriable",action="retry"}. The last try's error.
  template <class Call>
  kafka::Error retrying(Call call, Clock::time_point deadline);
  void fail(std::string message, int code);

  const config::Config& config_;
  transforms::Transform& transform_;
  // The observer's, or the engine's own when it was given none.
  std::unique_ptr<ops::Metrics> own_metrics_;
  std::unique_ptr<ops::Health> own_health_;
  ops::Observer observer_;
  Clock::time_point last_producer_poll_{};
  std::uint32_t instance_tag_ = 0;  // random, so attempt ids differ between processes
  std::uint64_t attempts_ = 0;
  mutable std::mutex aborted_mutex_;
  std::deque<std::string> aborted_attempts_;
  // Records that the open transaction of p was aborted: logged and kept.
  void note_aborted(const Partition& p, const char* why);
  std::string transform_version_;
  TransactionLimits limits_;
  kafka::Properties producer_properties_;
  std::unique_ptr<kafka::Consumer> consumer_;
  // producer_scope = "instance": the one producer, its transactional.id, whether a transaction is
  // open on it, and that transaction's attempt id.
  bool instance_scope_ = false;
  std::shared_ptr<kafka::TransactionalProducer> instance_producer_;
  std::string instance_id_;
  bool instance_open_ = false;
  Clock::time_point instance_commit_began_{};  // instance scope: the last commit's start
  std::string instance_attempt_;
  int output_partitions_ = 0;
  std::int64_t output_limit_ = 1000000;  // bytes: the output topic's max.message.bytes, or less
  std::int64_t dlq_limit_ = 1000000;     // the same for the dead-letter topic
  std::vector<std::string> producer_topics_;  // the output, then the dead-letter topic if any,
                                              // then the marker topic if any
  std::size_t marker_topic_ = 0;              // index of the marker topic; 0: no quarantine
  std::size_t lineage_topic_ = 0;             // index of the lineage topic; 0: lineage headers
  std::int64_t lineage_limit_ = 1000000;      // bytes: the lineage topic's record size limit
  std::array<std::string, 8> error_values_;   // values of a dead letter's exactly.error.* headers

  BufferedEmitter emitter_;
  std::vector<kafka::HeaderView> input_headers_;
  std::vector<transforms::Header> transform_headers_;
  std::vector<kafka::HeaderView> output_headers_;
  std::string lineage_;

  EngineCounters counters_;
  CommitHook commit_hook_;
  const std::atomic<int>* signals_ = nullptr;
  bool stopping_ = false;  // shutdown() has begun
  bool revoking_ = false;  // inside on_revoke(): partitions are being given away
  std::optional<int> stop_code_;  // set when the loop must end (fatal, transform failure)
  std::string stop_reason_;
  Clock::time_point last_report_{};
  Clock::time_point last_tick_{};  // tick() runs at most once a millisecond while records stream
  // Partition scope with transactions: each partition commits on a thread of its own, at its own
  // interval, while the loop goes on with the others.
  bool async_commits_ = false;
  int pending_ = 0;  // partitions with a commit running
  // Last: destroyed first, so that a commit still pending ends before what it uses goes.
  std::map<std::int32_t, Partition> partitions_;
};

}  // namespace exactly::engine
