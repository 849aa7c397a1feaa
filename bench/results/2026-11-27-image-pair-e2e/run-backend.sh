#!/bin/bash
# ResNet-50 .half() at batch 64 through the explicit API, torch.compile(backend="immconv") and
# torch.export, image pairs by default (28951f9), every conv compiled; device, carry .cache/carry-ip.
set -u
export PYTHONUNBUFFERED=1 SPCONV_TUNING_TABLE=$PWD/tuning/nvidia-h200.json IMMCONV_COMMIT=28951f9
python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index --target /tmp/site python/ > /dev/null 2>&1 && export PYTHONPATH=/tmp/site
C=/tmp/cache-ip; rm -rf $C; mkdir -p $C && cp -r .cache/carry-ip/. $C/
nvidia-smi --query-gpu=name,driver_version,serial --format=csv,noheader
timeout 400 python3 bench/torch_backend.py --phase run --policy all --sparsity 0.9 --input-scale 0.1 --net resnet50 --batch 64 --dtype f16 --cache $C --backend --out $OUT/resnet50-b64-f16-ip-all-backend.json 2>&1 | grep -v "^pytorch_fp32" | tail -14
