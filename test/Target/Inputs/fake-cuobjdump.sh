#!/bin/sh
# A cuobjdump that prints the SASS listing $SPCONV_FAKE_SASS names, whatever object it is
# given, or fails when that is "fail". With $SPCONV_FAKE_CUOBJDUMP_MARK set it first appends
# its arguments to that file: a disassembly was asked for, and of what.
if [ -n "$SPCONV_FAKE_CUOBJDUMP_MARK" ]; then
  echo "$*" >> "$SPCONV_FAKE_CUOBJDUMP_MARK"
fi
if [ "$SPCONV_FAKE_SASS" = fail ]; then
  echo "cuobjdump fatal: fake failure for the test" >&2
  exit 1
fi
cat "$SPCONV_FAKE_SASS"
