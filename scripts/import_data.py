#!/usr/bin/python3
"""Write the real data sets bnstudy ships under data/, from Debian's
python3-sklearn (which carries them inside the package: nothing is
downloaded).

  breast-cancer.csv  UCI Breast Cancer Wisconsin (Diagnostic), 569 x 30
  wine.csv           UCI Wine, 178 x 13
  digits.csv         UCI Optical Recognition of Handwritten Digits (the
                     1797-image test set), 8 x 8 pixels = 64 features

Each CSV has a header row of the features' names and a last column `label`
(the class name for Breast Cancer and Wine, the digit for Digits). Every
value is written as the shortest decimal that reads back as the same double
(Python's repr, or the integer itself when the value is one), and the
script reads each file back and checks that every value is identical
before it writes data/SHA256SUMS. Sources, licenses and citations are in
data/README.md.

    /usr/bin/python3 scripts/import_data.py [--out data]

The committed files are what this script writes with python3-sklearn
1.2.1; run it again to check they still are (git diff stays empty).
"""

import argparse
import csv
import hashlib
import io
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Every file stays far below the 1 MB a committed file may reach.
MAX_BYTES = 512 * 1024


def number(v):
    v = float(v)
    if v.is_integer() and abs(v) < 2.0 ** 53:
        return str(int(v))
    return repr(v)


def datasets():
    from sklearn import datasets as ds

    out = []
    b = ds.load_breast_cancer()
    out.append(("breast-cancer.csv", list(b.feature_names), b.data,
                [str(b.target_names[t]) for t in b.target]))
    w = ds.load_wine()
    out.append(("wine.csv", list(w.feature_names), w.data,
                [str(w.target_names[t]) for t in w.target]))
    d = ds.load_digits()
    out.append(("digits.csv", list(d.feature_names), d.data,
                [str(int(t)) for t in d.target]))
    return out


def render(names, x, labels):
    if "label" in names:
        raise SystemExit("a feature is already called 'label'")
    for n in names:
        if any(c in n for c in ',"\t\r\n'):
            raise SystemExit("feature name %r would need quoting" % n)
    buf = io.StringIO()
    buf.write(",".join(list(names) + ["label"]) + "\n")
    for row, lab in zip(x, labels):
        buf.write(",".join([number(v) for v in row] + [lab]) + "\n")
    return buf.getvalue().encode("ascii")


def check(data, names, x, labels):
    """The bytes read back with the csv module and float() give the same
    names, the same labels and the same doubles, bit for bit."""
    rows = list(csv.reader(io.StringIO(data.decode("ascii"))))
    if rows[0] != list(names) + ["label"]:
        raise SystemExit("header does not read back")
    if len(rows) - 1 != len(x):
        raise SystemExit("row count does not read back")
    for i, (r, want) in enumerate(zip(rows[1:], x)):
        got = [float(v) for v in r[:-1]]
        if got != [float(v) for v in want] or r[-1] != labels[i]:
            raise SystemExit("row %d does not read back" % (i + 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "data"))
    args = ap.parse_args()
    try:
        import sklearn
    except ImportError as e:
        print("import_data.py needs Debian's python3-sklearn: %s" % e,
              file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    sums = []
    for name, names, x, labels in datasets():
        data = render(names, x, labels)
        check(data, names, x, labels)
        if len(data) > MAX_BYTES:
            raise SystemExit("%s: %d bytes, over %d" % (name, len(data),
                                                        MAX_BYTES))
        with open(os.path.join(args.out, name), "wb") as fp:
            fp.write(data)
        sums.append("%s  %s\n" % (hashlib.sha256(data).hexdigest(), name))
        print("%-18s %5d rows x %2d features, %2d classes, %7d bytes"
              % (name, x.shape[0], x.shape[1], len(set(labels)), len(data)))
    with open(os.path.join(args.out, "SHA256SUMS"), "w") as fp:
        fp.writelines(sums)
    print("scikit-learn %s" % sklearn.__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
