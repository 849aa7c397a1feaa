#!/bin/sh
# A ptxas that dies the way the real one does when the kernel's OOM killer takes it, or
# fails with a message, or hangs, as $SPCONV_FAKE_PTXAS says ("kill", "fail", "sleep").
if [ "$SPCONV_FAKE_PTXAS" = kill ]; then
  kill -9 $$
fi
if [ "$SPCONV_FAKE_PTXAS" = sleep ]; then
  sleep 60
fi
echo "ptxas fatal   : fake failure for the test" >&2
exit 255
