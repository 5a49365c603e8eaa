#!/usr/bin/env bash
# The store's resume path on the GPU: a run, a resume of the whole folder (nothing measured
# again), and a resume after one measurement row is cut (that comparison measured again).
set -uo pipefail
B=$PWD/.carry/clvscu
S=$PWD/.carry/resume-study.toml
D=$OUT/resume
mkdir -p $OUT
{
$B run --study $S --out $D --no-plot -q; echo "run rc $?"
wc -l < $D/measurements.csv
$B run --study $S --out $D --no-plot -q --resume; echo "resume (whole) rc $?"
wc -l < $D/measurements.csv
head -n -1 $D/measurements.csv > $D/m.tmp && mv $D/m.tmp $D/measurements.csv
wc -l < $D/measurements.csv
$B run --study $S --out $D --no-plot -q --resume; echo "resume (cut) rc $?"
wc -l < $D/measurements.csv; wc -l < $D/prs.csv
} > $OUT/resume.log 2>&1
cut -d, -f3,4,39 $D/measurements.csv > $OUT/resume-rows.txt
tar czf $OUT/resume.tgz -C $OUT resume
cat $OUT/resume.log
