#!/bin/sh
# The smallest run: the workspace's default profile supplies image, queue and sizes.
echo "hello from run ${TAU_RUN_ID:-?} (attempt ${TAU_ATTEMPT:-?}) in workspace ${TAU_WORKSPACE:-?}"
