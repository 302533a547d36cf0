#!/usr/bin/env bash
# Install the system packages the test suite needs, if missing: Chromium (browser
# tests drive Debian's build through Playwright) and a Java development kit (METEOR 1.5; the PTB tokenizer line server runs from source).
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
{ command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; } || need+=(default-jdk-headless)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing system packages: ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
