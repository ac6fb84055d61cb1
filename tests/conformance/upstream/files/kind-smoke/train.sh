#!/bin/sh
set -eu
echo "kind smoke on $(hostname)"
