#!/usr/bin/env bash
# Checks that every benchmark figure can be re-run: each section (a ## or ### heading
# and the text up to the next one) of the area pages in docs/benchmarks/ that holds a
# figure (any digit) has the four labelled lines, each at the start of a line:
#   Command:  what produced the figures (committed programs and scripts)
#   Machine:  where it ran
#   Date:     YYYY-MM-DD
#   Commit:   the commit measured, or "recorded in <hash>" (at least one hash)
# README.md (the index and method) and history.md (the old notebook, kept in session
# order) are not area pages. It also fails if any tracked file still cites the
# private folder that benchmark scripts used to live in without being committed
# (the pattern is spelled [.]carry below so that this file does not match itself).
# Changes nothing; needs only git and awk.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
pages=()
for page in docs/benchmarks/*.md; do
  case "$(basename "$page")" in
    README.md | history.md) ;;
    *) pages+=("$page") ;;
  esac
done
if [ ${#pages[@]} -eq 0 ]; then
  echo "bench-docs-check: no area pages in docs/benchmarks/" >&2
  exit 1
fi

for page in "${pages[@]}"; do
  # One line per problem: "page:line: section: what is missing".
  problems=$(awk -v page="$page" '
    function finish() {
      if (heading == "" || !figures) return
      split("Command Machine Date Commit", labels, " ")
      for (i = 1; i <= 4; ++i)
        if (!(labels[i] in seen))
          printf "%s:%d: %s: no %s: line\n", page, start, heading, labels[i]
      if (("Date" in seen) && seen["Date"] !~ /^Date: [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/)
        printf "%s:%d: %s: Date: is not YYYY-MM-DD\n", page, start, heading
      if (("Commit" in seen) && seen["Commit"] !~ /[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]/)
        printf "%s:%d: %s: Commit: names no hash\n", page, start, heading
    }
    /^```/ { fenced = !fenced }
    !fenced && /^###? / {
      finish()
      heading = $0; start = NR; figures = 0; delete seen
      next
    }
    heading != "" {
      if ($0 ~ /^(Command|Machine|Date|Commit): /) {
        label = substr($0, 1, index($0, ":") - 1)
        if (!(label in seen)) seen[label] = $0
      } else if ($0 ~ /[0-9]/) {
        figures = 1
      }
    }
    END { finish() }
  ' "$page")
  if [ -n "$problems" ]; then
    echo "$problems" >&2
    status=1
  fi
done

if citations=$(git grep --untracked -n '[.]carry' -- . 2>/dev/null); then
  echo "$citations" >&2
  echo "bench-docs-check: the lines above cite an uncommitted private folder; give the committed command" >&2
  status=1
fi

if [ "$status" -eq 0 ]; then
  sections=$(cat "${pages[@]}" | grep -c -E '^###? ')
  echo "bench-docs-check: ${#pages[@]} area pages, $sections sections, each with Command, Machine, Date and Commit"
else
  echo "bench-docs-check: failed" >&2
fi
exit "$status"
