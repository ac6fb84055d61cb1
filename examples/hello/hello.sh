#!/bin/sh
echo "hello from $(hostname) in run ${TAU_RUN_ID:-?}"
