#!/bin/sh
echo eval
