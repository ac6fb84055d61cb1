#!/bin/sh
echo train
