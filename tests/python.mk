# tests/python.mk - the tests of CPython's frames (unwind/python.c): their
# helpers and target programs (Python scripts run by Debian's python3.11,
# and python3.13 in a Debian 13 root made by tests/py-trixie-root.sh).
EXTRA_DIST += tests/py-core-edit.py tests/py-trixie-root.sh tests/pyframes-compare.py \
	tests/targets/pyframes.py
