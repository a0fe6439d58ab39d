#!/usr/bin/env bash
# How long Debian's chromium (headless) takes to open an HTML report of 10,000
# plan rows (`fitspeed plan llm ... --top 10000 -o html`: 10,000 ranked splits
# and 10,000 that do not fit), side by side with the same rows as one plain
# <table> each (the page before tables were cut at kHtmlTableRows) and with a
# page of one paragraph. Method (bench/README.md, "HTML reports in a
# browser"): a harness page loads each in an iframe and writes into its own
# title the milliseconds from its first script to the frame's load event plus
# one animation frame and a forced layout; chromium --dump-dom prints that
# title. Run REPEATS times, the pages alternating.
#
#   bench/html_report_bench.sh [build/fitspeed] [REPEATS]
set -euo pipefail
cli=${1:-build/fitspeed}
repeats=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$cli" plan llm llama-3-70b --device h100 --devices 16384 --global-batch 4096 --seq-len 8192 \
  --tokens 15e12 --price 2 --top 10000 -o html >"$work/report.html"
# The same page with every CSV row put back into its table.
python3 - "$work/report.html" "$work/all_rows.html" <<'EOF'
import html, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
def table_of(match):
    lines = html.unescape(match.group(2)).strip("\n").split("\n")[1:]
    import csv
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>\n"
                   for r in csv.reader(lines))
    return f'<table id="{match.group(1)}-all"><tbody>{rows}</tbody></table>'
page = re.sub(r'<pre id="([a-z-]+)-csv">(.*?)</pre>', table_of, page, flags=re.S)
open(sys.argv[2], "w", encoding="utf-8").write(page)
EOF
printf '<!DOCTYPE html><html><head><meta charset="utf-8"/><title>x</title></head><body><p>x</p></body></html>\n' \
  >"$work/small.html"
for page in report all_rows small; do
  cat >"$work/h_$page.html" <<EOF
<!DOCTYPE html><html><head><meta charset="utf-8"/><title>pending</title></head><body>
<script>const t0 = performance.now();</script>
<iframe src="$page.html" style="width:1200px;height:900px" onload="const f = this;
 requestAnimationFrame(() => { f.contentDocument.body.offsetHeight;
 document.title = 'loaded_ms=' + (performance.now() - t0).toFixed(0); });"></iframe>
</body></html>
EOF
done
echo "pages: report $(stat -c %s "$work/report.html") bytes," \
  "$(grep -c '<tr>' "$work/report.html") table rows; all_rows $(stat -c %s "$work/all_rows.html") bytes," \
  "$(grep -c '<tr>' "$work/all_rows.html") table rows"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 1; i <= repeats; ++i)); do
  for page in report all_rows small; do
    ms=$(chromium --headless=new --no-sandbox --disable-gpu --no-first-run \
      --user-data-dir="$work/profile" --allow-file-access-from-files \
      --dump-dom "file://$work/h_$page.html" 2>/dev/null | sed -n 's/.*<title>loaded_ms=\([0-9]*\)<.*/\1/p')
    echo "run $i  $page  ${ms:-?} ms"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
