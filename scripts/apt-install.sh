# Sourced by the scripts that install a tool once and cache it (test-server.sh, whisper-server.sh):
# apt_install PKG... installs Debian packages when root, else stops naming them. Needs the sourcing
# script's `die`.
apt_install() {
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || die "missing $* and not root: install them (apt-get install -y $*)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "$@" >&2
}
