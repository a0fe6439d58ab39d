// All-reduce timings from nccl-tests and OSU logs, and the link between nodes
// they calibrate (link_logs.h).
#include "fitspeed/project/link_logs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "core/input_file.h"
#include "fitspeed/core/error.h"
#include "io/text.h"

namespace fitspeed {

namespace {

constexpr double kMicrosecond = 1e-6;

bool StartsWithDigit(std::string_view line) {
  line = io::Trim(line);
  return !line.empty() && line.front() >= '0' && line.front() <= '9';
}

// A field that must be a number.
double Number(std::string_view text, const std::string& source, int line, std::string_view field) {
  return io::ParseNumber(text, source, line, field);
}

// A time in microseconds that must be > 0, in seconds.
double Microseconds(std::string_view text, const std::string& source, int line,
                    std::string_view field) {
  return io::ParsePositive(text, source, line, field) * kMicrosecond;
}

double Bytes(std::string_view text, const std::string& source, int line, std::string_view field) {
  const double bytes = Number(text, source, line, field);
  if (!(bytes >= 0) || !std::isfinite(bytes) || bytes != std::floor(bytes)) {
    throw DataError(source, line, std::string(field),
                    fmt::format("expected a whole number of bytes >= 0, got '{}'", text));
  }
  return bytes;
}

// ---- nccl-tests --------------------------------------------------------------

// The table's column names, from its header line ("#  size  count  type  redop
// root  time  algbw  busbw  #wrong  time ..."): the out-of-place group first,
// then the in-place one. -1 where a column is absent.
struct NcclColumns {
  int count = 0;  // fields of a row
  int size = -1, type = -1, redop = -1, root = -1;
  int time_out = -1, wrong_out = -1;
  int time_in = -1, wrong_in = -1;
};

// Whether a "#" line is the column header: its names include size, time and busbw.
bool IsNcclHeader(const std::vector<std::string_view>& names) {
  auto has = [&](std::string_view n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  };
  return has("size") && has("time") && has("busbw");
}

NcclColumns ReadNcclHeader(const std::vector<std::string_view>& names) {
  NcclColumns c;
  c.count = static_cast<int>(names.size());
  for (int i = 0; i < c.count; ++i) {
    const std::string_view n = names[static_cast<size_t>(i)];
    if (n == "size") c.size = i;
    if (n == "type") c.type = i;
    if (n == "redop") c.redop = i;
    if (n == "root") c.root = i;
    if (n == "time") (c.time_out < 0 ? c.time_out : c.time_in) = i;
    // "#wrong" counts wrong values; older versions' "error" (the largest
    // deviation, not 0 for rounding) is not checked.
    if (n == "#wrong") (c.wrong_out < 0 ? c.wrong_out : c.wrong_in) = i;
  }
  return c;
}

LinkLog ParseNcclTests(const std::string& text, const std::string& source) {
  LinkLog log;
  log.source = source;
  log.format = LinkLogFormat::kNcclTests;
  log.benchmark = "nccl-tests all_reduce_perf";
  std::set<int> ranks;
  std::optional<NcclColumns> columns;
  int header_line = 0;
  io::LineCursor cursor(text);
  std::string_view line;
  while (cursor.Next(line)) {
    const int n = cursor.number();
    const std::string_view trimmed = io::Trim(line);
    if (io::StartsWith(trimmed, "#")) {
      std::vector<std::string_view> words = io::SplitBlank(trimmed.substr(1));
      // "#  Rank  0 Group  0 Pid  6899 on HOST device  0 [...] NAME" (older
      // versions without "Group"): one line per rank.
      if (words.size() >= 4 && words[0] == "Rank") {
        const auto on = std::find(words.begin(), words.end(), "on");
        if (on == words.end() || on + 1 == words.end()) {
          throw DataError(source, n, "Rank", "a rank line without 'on HOST'");
        }
        const double rank = Number(words[1], source, n, "Rank");
        if (!(rank >= 0) || rank != std::floor(rank) || rank > 1e7) {
          throw DataError(source, n, "Rank", fmt::format("not a rank number: '{}'", words[1]));
        }
        ranks.insert(static_cast<int>(rank));
        const std::string host(on[1]);
        if (std::find(log.hosts.begin(), log.hosts.end(), host) == log.hosts.end()) {
          log.hosts.push_back(host);
        }
        continue;
      }
      // The first names are under "#": "#  size" may also be "#       size".
      if (!words.empty() && IsNcclHeader(words)) {
        if (columns && !log.timings.empty()) {
          throw DataError(source, n, "",
                          fmt::format("a second table (the first began at line {}): give one run "
                                      "per file",
                                      header_line));
        }
        columns = ReadNcclHeader(words);
        header_line = n;
        if (columns->size < 0 || (columns->time_in < 0 && columns->time_out < 0)) {
          throw DataError(source, n, "", "the table header names no size or time column");
        }
      }
      continue;
    }
    // Rows start with the size; other lines (NCCL INFO, launcher messages) are not ours.
    if (!columns || !StartsWithDigit(trimmed)) continue;
    const std::vector<std::string_view> f = io::SplitBlank(trimmed);
    if (static_cast<int>(f.size()) != columns->count) {
      throw DataError(source, n, "",
                      fmt::format("a row of {} fields; the header at line {} names {}", f.size(),
                                  header_line, columns->count));
    }
    auto at = [&](int i) { return f[static_cast<size_t>(i)]; };
    if (columns->redop >= 0 && at(columns->redop) == "none") {
      throw DataError(source, n, "redop",
                      "'none': this is not an all-reduce (all_gather_perf, broadcast_perf, ...); "
                      "give all_reduce_perf's output");
    }
    if (columns->root >= 0 && at(columns->root) != "-1") {
      throw DataError(source, n, "root",
                      fmt::format("'{}': a rooted collective (reduce_perf); give "
                                  "all_reduce_perf's output (root -1)",
                                  at(columns->root)));
    }
    for (const int wrong : {columns->wrong_out, columns->wrong_in}) {
      if (wrong < 0) continue;
      // "N/A" when the run did not check (-c 0).
      const std::optional<double> count = io::ToDouble(at(wrong));
      if (count && *count != 0) {
        throw DataError(source, n, "#wrong",
                        fmt::format("{} wrong results: the run failed its check", at(wrong)));
      }
    }
    const int time = columns->time_in >= 0 ? columns->time_in : columns->time_out;
    const char* time_field = columns->time_in >= 0 ? "time (in-place, us)" : "time (us)";
    log.timings.push_back({Bytes(at(columns->size), source, n, "size"),
                           Microseconds(at(time), source, n, time_field)});
    log.lines.push_back(n);
  }
  if (!columns) {
    throw DataError(source, 0, "",
                    "no table header ('# size count type redop root time algbw busbw ...'): not "
                    "nccl-tests output");
  }
  if (log.timings.empty()) {
    throw DataError(source, 0, "",
                    fmt::format("no rows under the table header at line {}", header_line));
  }
  log.ranks = static_cast<int>(ranks.size());
  log.nodes = static_cast<int>(log.hosts.size());
  return log;
}

// ---- OSU micro-benchmarks ----------------------------------------------------

LinkLog ParseOsu(const std::string& text, const std::string& source) {
  LinkLog log;
  log.source = source;
  log.format = LinkLogFormat::kOsu;
  bool header = false;
  int title_line = 0;
  io::LineCursor cursor(text);
  std::string_view line;
  while (cursor.Next(line)) {
    const int n = cursor.number();
    const std::string_view trimmed = io::Trim(line);
    if (io::StartsWith(trimmed, "# OSU")) {
      if (title_line > 0 && !log.timings.empty()) {
        throw DataError(source, n, "",
                        fmt::format("a second test (the first began at line {}): give one run "
                                    "per file",
                                    title_line));
      }
      // "# OSU MPI Allreduce Latency Test v7.3", "# OSU MPI-CUDA Allreduce Latency Test v5.6"
      if (!io::Contains(io::ToLower(trimmed), "allreduce")) {
        throw DataError(
            source, n, "",
            fmt::format("'{}' is not osu_allreduce's output", io::Excerpt(trimmed, 60)));
      }
      log.benchmark = std::string(io::Trim(trimmed.substr(1)));
      title_line = n;
      header = false;
      continue;
    }
    if (io::StartsWith(trimmed, "#")) {
      const std::vector<std::string_view> words = io::SplitBlank(trimmed.substr(1));
      if (!words.empty() && words[0] == "Size") {
        // "# Size       Avg Latency(us)" (with -f: Min Latency(us), Max Latency(us), Iterations).
        if (words.size() < 3 || words[1] != "Avg" || words[2] != "Latency(us)") {
          throw DataError(source, n, "Avg Latency(us)",
                          "the header's second column is not 'Avg Latency(us)'");
        }
        if (title_line == 0) {
          throw DataError(source, n, "", "a table before the '# OSU ... Allreduce' title line");
        }
        header = true;
      }
      continue;
    }
    if (!header || !StartsWithDigit(trimmed)) continue;
    const std::vector<std::string_view> f = io::SplitBlank(trimmed);
    if (f.size() < 2) {
      throw DataError(source, n, "Avg Latency(us)", "a row with a size and no latency");
    }
    log.timings.push_back(
        {Bytes(f[0], source, n, "Size"), Microseconds(f[1], source, n, "Avg Latency(us)")});
    log.lines.push_back(n);
  }
  if (title_line == 0) {
    throw DataError(source, 0, "", "no '# OSU MPI Allreduce Latency Test' line: not OSU output");
  }
  if (!header) {
    throw DataError(source, 0, "", "no '# Size       Avg Latency(us)' header");
  }
  if (log.timings.empty()) throw DataError(source, 0, "", "no rows under the header");
  return log;
}

LinkLogFormat Detect(const std::string& text, const std::string& source) {
  io::LineCursor cursor(text);
  std::string_view line;
  while (cursor.Next(line)) {
    const std::string_view trimmed = io::Trim(line);
    if (!io::StartsWith(trimmed, "#")) continue;
    if (io::StartsWith(trimmed, "# OSU")) return LinkLogFormat::kOsu;
    const std::vector<std::string_view> words = io::SplitBlank(trimmed.substr(1));
    if (IsNcclHeader(words)) return LinkLogFormat::kNcclTests;
  }
  throw DataError(source, 0, "",
                  "neither nccl-tests output (a '# size ... time algbw busbw' header) nor "
                  "osu_allreduce output (a '# OSU MPI Allreduce Latency Test' line); give "
                  "--from-format if it is one of them");
}

}  // namespace

const char* LinkLogFormatName(LinkLogFormat format) {
  switch (format) {
    case LinkLogFormat::kAuto:
      return "auto";
    case LinkLogFormat::kNcclTests:
      return "nccl-tests";
    case LinkLogFormat::kOsu:
      return "osu";
  }
  return "auto";
}

LinkLogFormat ParseLinkLogFormat(const std::string& name) {
  if (name == "auto") return LinkLogFormat::kAuto;
  if (name == "nccl-tests") return LinkLogFormat::kNcclTests;
  if (name == "osu") return LinkLogFormat::kOsu;
  throw UsageError(
      fmt::format("unknown link log format '{}' (known: auto, nccl-tests, osu)", name));
}

LinkLog ParseLinkLog(const std::string& text, const std::string& source, LinkLogFormat format) {
  if (io::LooksBinary(text)) throw DataError(source, 0, "", "binary data, not a text log");
  if (format == LinkLogFormat::kAuto) format = Detect(text, source);
  return format == LinkLogFormat::kOsu ? ParseOsu(text, source) : ParseNcclTests(text, source);
}

LinkLog ReadLinkLogFile(const std::string& path, LinkLogFormat format) {
  return ParseLinkLog(ReadInputFile(path, "the link log"), path, format);
}

MeasuredLink InterNodeLinkFromAllReduce(const AlphaBetaFit& fit, int per_node, int nodes,
                                        const Link& intra) {
  if (nodes < 2 || per_node < 1) {
    throw UsageError(fmt::format(
        "an inter-node link needs nodes >= 2 and ranks per node >= 1, got {} nodes of {}", nodes,
        per_node));
  }
  // The in-node ring's share of alpha and beta (0 for one rank per node).
  const double p = per_node;
  const double intra_alpha = per_node > 1 ? 2 * (p - 1) * intra.latency_s : 0;
  const double intra_beta =
      per_node > 1 ? 2 * (p - 1) / p / intra.bandwidth_bytes_per_s : 0;  // 0 for +inf
  if (!(fit.beta_s_per_byte > intra_beta)) {
    throw DataError(
        fmt::format("the in-node link ({:.4g} B/s per direction over {} ranks) takes {:.4g} s/B "
                    "of the measured {:.4g} s/B: nothing is left for the network; is the in-node "
                    "link too slow, or the measurement one node?",
                    intra.bandwidth_bytes_per_s, per_node, intra_beta, fit.beta_s_per_byte));
  }
  AlphaBetaFit network = fit;
  auto shift = [](double value, double by) {
    return std::isnan(value) ? value : std::max(0.0, value - by);
  };
  network.alpha_s = shift(fit.alpha_s, intra_alpha);
  network.alpha_ci_low = shift(fit.alpha_ci_low, intra_alpha);
  network.alpha_ci_high = shift(fit.alpha_ci_high, intra_alpha);
  network.beta_s_per_byte = fit.beta_s_per_byte - intra_beta;
  network.beta_ci_low = shift(fit.beta_ci_low, intra_beta);
  network.beta_ci_high = shift(fit.beta_ci_high, intra_beta);
  return RingLinkFromAllReduce(network, nodes);
}

NodeCountLinkFit NetworkLinkFromNodeCounts(const std::vector<NodeCountRun>& runs, int fewer_nodes,
                                           int more_nodes, double confidence) {
  if (fewer_nodes < 1 || more_nodes <= fewer_nodes) {
    throw UsageError(fmt::format(
        "a network link from runs on two node counts needs more_nodes > fewer_nodes >= 1, got "
        "{} and {}",
        fewer_nodes, more_nodes));
  }
  std::vector<LinkTiming> differences;
  for (size_t i = 0; i < runs.size(); ++i) {
    const NodeCountRun& r = runs[i];
    const std::string name = fmt::format("run {}", i + 1);
    for (const auto& [value, field] : {std::pair{r.fewer_nodes_step_s, "fewer_nodes_step_s"},
                                       std::pair{r.more_nodes_step_s, "more_nodes_step_s"}}) {
      if (!(value > 0 && std::isfinite(value))) {
        throw DataError(name, 0, field, fmt::format("must be > 0 and finite, got {}", value));
      }
    }
    const double d = r.more_nodes_step_s - r.fewer_nodes_step_s;
    if (!(d > 0)) {
      throw DataError(
          name, 0, "more_nodes_step_s",
          fmt::format("{} s on {} nodes is not slower than {} s on {}: the runs do not "
                      "expose the all-reduce between nodes",
                      r.more_nodes_step_s, more_nodes, r.fewer_nodes_step_s, fewer_nodes));
    }
    differences.push_back({r.gradient_bytes, d});
  }
  NodeCountLinkFit result;
  result.fewer_nodes = fewer_nodes;
  result.more_nodes = more_nodes;
  result.fit = FitAlphaBeta(differences, confidence);
  // D = 2(k2-k1) a + (c2 - c1) S/B, c = 2(k-1)/k. RingLinkFromAllReduce over
  // k2 ranks inverts alpha = 2(k2-1) a, beta = c2/B: rescale to that form.
  const auto c = [](int k) { return 2.0 * (k - 1) / k; };
  const double alpha_scale = static_cast<double>(more_nodes - 1) / (more_nodes - fewer_nodes);
  const double beta_scale = c(more_nodes) / (c(more_nodes) - c(fewer_nodes));
  AlphaBetaFit ring = result.fit;
  for (double* v :
       {&ring.alpha_s, &ring.alpha_std_error, &ring.alpha_ci_low, &ring.alpha_ci_high}) {
    *v *= alpha_scale;
  }
  for (double* v :
       {&ring.beta_s_per_byte, &ring.beta_std_error, &ring.beta_ci_low, &ring.beta_ci_high}) {
    *v *= beta_scale;
  }
  result.network = RingLinkFromAllReduce(ring, more_nodes);
  return result;
}

std::vector<NodeCountRun> ReadNodeCountRuns(const std::string& path) {
  const std::string text = ReadInputFile(path, "the runs file");
  if (io::LooksBinary(text)) throw DataError(path, 0, "", "binary data, not a CSV file");
  std::vector<NodeCountRun> runs;
  std::vector<std::string> header;
  int fewer = -1, more = -1, bytes = -1, params = -1;
  io::LineCursor cursor(text);
  std::string_view line;
  while (cursor.Next(line)) {
    const int n = cursor.number();
    const std::string_view trimmed = io::Trim(line);
    if (trimmed.empty() || io::StartsWith(trimmed, "#")) continue;
    std::vector<std::string> fields = io::Split(trimmed, ',', true);
    for (std::string& f : fields) f = std::string(io::Trim(f));
    if (header.empty()) {
      header = fields;
      for (size_t i = 0; i < header.size(); ++i) {
        const int c = static_cast<int>(i);
        if (header[i] == "fewer_nodes_step_s") fewer = c;
        if (header[i] == "more_nodes_step_s") more = c;
        if (header[i] == "gradient_bytes") bytes = c;
        if (header[i] == "params") params = c;
      }
      for (const auto& [column, name] :
           {std::pair{fewer, "fewer_nodes_step_s"}, std::pair{more, "more_nodes_step_s"}}) {
        if (column < 0) throw DataError(path, n, name, "missing column");
      }
      if ((bytes < 0) == (params < 0)) {
        throw DataError(path, n, "gradient_bytes",
                        "give one column of gradient_bytes or params (4 bytes each), not both "
                        "and not neither");
      }
      continue;
    }
    if (fields.size() != header.size()) {
      throw DataError(path, n, "",
                      fmt::format("{} fields; the header has {}", fields.size(), header.size()));
    }
    auto at = [&](int column) { return fields[static_cast<size_t>(column)]; };
    NodeCountRun run;
    run.gradient_bytes = bytes >= 0 ? io::ParsePositive(at(bytes), path, n, "gradient_bytes")
                                    : 4 * io::ParsePositive(at(params), path, n, "params");
    run.fewer_nodes_step_s = io::ParsePositive(at(fewer), path, n, "fewer_nodes_step_s");
    run.more_nodes_step_s = io::ParsePositive(at(more), path, n, "more_nodes_step_s");
    runs.push_back(run);
  }
  if (header.empty()) throw DataError(path, 0, "", "empty: no header row");
  if (runs.empty()) throw DataError(path, 0, "", "a header and no runs");
  return runs;
}

std::string NodeCountLinkFit::BriefReport() const {
  return fmt::format(
      "network link from {} vs {} nodes: {:.4g} B/s per direction [{:.4g}, {:.4g}], {:.4g} s per "
      "message [{:.4g}, {:.4g}] ({} runs, rms relative residual {:.3g}, max {:.3g})",
      more_nodes, fewer_nodes, network.link.bandwidth_bytes_per_s, network.bandwidth_low,
      network.bandwidth_high, network.link.latency_s, network.latency_low, network.latency_high,
      fit.points, fit.rms_relative_residual, fit.max_relative_residual);
}

}  // namespace fitspeed
