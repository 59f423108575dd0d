#!/bin/sh
# chapter.sh N - print chapter N as two digits, or explain what is valid.
. labs/host/common.sh
chapter_nn "${1-}"
