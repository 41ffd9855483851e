#!/bin/bash
# Writes experiments/users.tsv, the population experiments/clf-users.ini
# reads: the generated population of 4 classes (512 rows, bnstudy
# population --classes 4) shared among 4 users, row i the user i mod 4's
# (the rows are in the latent's order, so each user has every class
# alike), and each user's rows moved by the same amount in every feature,
# (u - 1.5): a per-user calibration offset, the nuisance a batch of one
# user's rows takes out in training mode. Run from the repository's root
# after make; the file it writes is committed, and tests/cli.sh checks
# that this script still writes the same bytes.
set -euo pipefail
bin=${BNSTUDY:-./bnstudy}
out=${1:-experiments/users.tsv}
"$bin" population --classes 4 | awk -F '\t' -v OFS='\t' '
    NR == 1 { $1 = "user"; print; next }
    { u = $1 % 4; $1 = "u" u
      for (i = 2; i < NF; i++) $i = sprintf("%.17g", $i + (u - 1.5))
      print }
' > "$out.tmp"
mv "$out.tmp" "$out"
