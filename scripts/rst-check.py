#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
# `make rst`: every .rst given parses with docutils without a warning (a
# title underline shorter than its title, a table or literal block that
# does not line up, an unknown role), the mistakes Sphinx would warn of.
# Prints one line per file; exits 1 if any file warned.
import io
import sys

import docutils.core

bad = 0
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    msgs = io.StringIO()
    docutils.core.publish_doctree(
        text, source_path=path,
        settings_overrides={"report_level": 2, "halt_level": 5,
                            "warning_stream": msgs})
    out = msgs.getvalue().strip()
    if out:
        bad += 1
        print(f"rst: {path}: warnings:\n{out}")
    else:
        print(f"rst: {path}: clean")
sys.exit(1 if bad else 0)
