#!/usr/bin/env bash
# Install the system packages the test suite needs, if missing: Chromium (browser
# tests drive Debian's build through Playwright), a Java development kit (METEOR 1.5; the PTB tokenizer line server runs from source),
# and nginx with openssl (the proxy of docs/teams.md runs in front of an app server, on a free port, with a
# certificate made for the test; the test starts its own nginx and needs no service).
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
{ command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; } || need+=(default-jdk-headless)
{ command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; } || need+=(nginx)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "installing system packages: ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
