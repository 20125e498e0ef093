// Crash-loop quarantine: finding the record that kills the process.
//
// A record that crashes the process (a segfault in a plugin) is redone after every restart, since
// its range was never committed, and crashes it again. Nothing inside the dying process can
// notice; the next owner of the partition can, if the previous one left a note. That note is a
// marker in a compacted topic, keyed by the partition's transactional.id, written with the
// partition's own transactional producer in a transaction of its own (so a fenced zombie cannot
// write one, and a read_committed reader sees only markers whose writer got that far):
//
//   running     offset=C deaths=D owner=P       an owner (process P) started at committed
//                                                 offset C; D is the number of owners before it
//                                                 that died without progress at C
//   quarantine  offset=C deaths=D suspect=S span=N until=U grow=G alone=A owner=P
//                                                 the owner runs [C, U) in small transactions of
//                                                 their own; the one running now starts at
//                                                 committed offset S and holds at most N records;
//                                                 A records are left to run one per transaction
//   (none)      a tombstone: the last owner stopped cleanly
//
// Transactions are named by the committed offset they start from, never by a record's offset:
// the record after a committed offset is not always at that offset (a transaction marker of the
// input's own producer, a compacted or aborted record lies between).
//
// A new owner reads its marker after init_transactions (which settles the old owner's
// transactions, markers included) and after the committed offset C:
//   - no marker: the last owner left cleanly; start counting at C.
//   - any marker written by this very process: it lost the partition (a lost assignment, a
//     broker's trouble) and got it back. It is alive, so nothing killed it: no death is counted.
//   - running with started=1, and input is waiting at C: the last owner died after it began
//     processing. It died at the same offset as the one before it when the marker's offset is C:
//     one more death in a row, else the first. With `deaths` in a row, quarantine
//     [C, C + max_records): the record that killed them was in the first transaction after C,
//     which holds at most max_records records.
//   - running with started=0: the last owner died before it processed a record (killed while
//     starting), or it lost the partition alive and said so; that end says nothing about the
//     records and is not counted.
//   - quarantine with suspect = C and span N > 1: the last owner died in the transaction of the
//     (at most) N records from C: they run one record per transaction (alone = N), then the
//     transactions grow again.
//   - quarantine with suspect = C and span 1: the last owner died while running the record from C
//     alone. The first time (tries=1), it is run alone once more; the second time, it is
//     convicted: handed to on_error with error class "crash" without running the transform.
//   - quarantine otherwise: go on with the quarantine from C (or end it at U).
// A quarantine starts with transactions of 1 record and, while grow=1, doubles their size after
// each full one: a quarantine that finds nothing (the deaths were not a record's doing) costs
// about log2(max_records) small transactions, not max_records of them; one that finds the record
// costs one more death, in the transaction that holds it, before it runs those records alone.
// An owner that is not in a quarantine rewrites its marker with started=1 just before its first
// record. In a quarantine it writes `suspect = C, span = n` before the transaction of up to n
// records from committed offset C, and commits that transaction before it writes the next
// marker. A clean stop writes a tombstone, or in a quarantine the marker with no suspect, so that
// the next owner convicts nobody; an owner that loses its partition alive writes, if its
// transactional producer is not fenced yet, started=0 (or the quarantine marker with no
// suspect), so that its end is not taken for a death.
//
// An external kill -9 counts as a death too, when it comes after the owner began processing. To
// convict an innocent record it takes `deaths` of them in a row, each before the first commit
// after the owner began (commits come every commit interval), then two more, each while that one
// record runs alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace exactly::engine {

struct Marker {
  enum class State { running, quarantine };
  State state = State::running;
  std::int64_t offset = 0;    // the committed offset the owner started at (or the quarantine did)
  std::int64_t deaths = 0;    // owners before this one that died without progress at `offset`
  std::int64_t suspect = -1;  // quarantine: the committed offset the running transaction
                              // starts from; -1: none
  std::int64_t until = -1;    // quarantine: the end (exclusive) of the range run one by one
  std::int64_t tries = 0;     // quarantine: the times `suspect` has been run alone
  std::int64_t span = 1;      // quarantine: the records of the transaction from `suspect`
  bool grow = false;          // quarantine: transactions double in size after each commit
  std::int64_t alone = 0;     // quarantine: records left to run one per transaction
  bool started = false;       // running: the owner began processing records
  std::int64_t owner = 0;     // the process that wrote it (Engine's instance tag); 0: unknown

  friend bool operator==(const Marker&, const Marker&) = default;
};

// The marker as the text of a record value ("running offset=12 deaths=1").
std::string encode(const Marker& marker);
// The marker, or nullopt with `error` set when the text is not one.
std::optional<Marker> decode(std::string_view text, std::string& error);

// What a new owner of a partition does, from the marker it found.
struct StartDecision {
  std::optional<Marker> write;      // the marker to write before processing; nullopt: keep it
  bool quarantine = false;          // run records in transactions of their own until `until`
  std::int64_t until = -1;
  bool grow = false;                // in a quarantine: transactions start at 1 record and double
  bool own = false;                 // the last owner was this process: nothing was counted
  bool narrowed = false;            // the last owner died in a transaction of several records
  std::int64_t alone = 0;           // in a quarantine: records to run one per transaction first
  // Hand the record from this committed offset to on_error as class "crash".
  std::optional<std::int64_t> convict;
  std::int64_t deaths = 0;          // deaths in a row counted so far
  // In a quarantine: the offset the last owner died on while running it alone, and how often;
  // the next marker naming it counts on from there.
  std::int64_t suspect = -1;
  std::int64_t tries = 0;
};

// Deaths while one record runs alone that convict it.
inline constexpr std::int64_t tries_to_convict = 2;

// `previous`: the marker found (nullopt: none, or a tombstone); `committed`: where this owner
// starts (the committed offset, or the first offset when there is none); `input_waiting`: the
// partition holds records at or after `committed`; `deaths_to_quarantine`: config K;
// `range`: the records of a quarantine (transactions.max_records); `self`: this process's
// instance tag (the `owner` of the markers it writes).
StartDecision decide_start(const std::optional<Marker>& previous, std::int64_t committed,
                           bool input_waiting, std::int64_t deaths_to_quarantine,
                           std::int64_t range, std::int64_t self);

}  // namespace exactly::engine
