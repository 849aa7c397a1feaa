#!/bin/sh
# A ptxas that dies the way the real one does when the kernel's OOM killer takes it, or
# fails with a message, or hangs, as $SPCONV_FAKE_PTXAS says ("kill", "fail", "sleep").
# With $SPCONV_FAKE_PTXAS_MARK set it first creates that file: a ptxas run was started.
if [ -n "$SPCONV_FAKE_PTXAS_MARK" ]; then
  : > "$SPCONV_FAKE_PTXAS_MARK"
fi
if [ "$SPCONV_FAKE_PTXAS" = kill ]; then
  kill -9 $$
fi
if [ "$SPCONV_FAKE_PTXAS" = sleep ]; then
  sleep 60
fi
echo "ptxas fatal   : fake failure for the test" >&2
exit 255
