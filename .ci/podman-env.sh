# Sourced by .ci/containers.sh and .ci/base-images.sh: podman as CI runs it, apart from anything
# else on the machine. Its own config files (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF), written
# here; its image store under the cache outside the clone ($OPCO_PROXY_CACHE/containers, so the
# stand-in base images stay imported between runs), its run-time state under /run/opco-proxy-ci.
# /etc/containers is neither read nor written.
#
# Why each setting: these machines drop CAP_SYS_RESOURCE, so podman's default ulimits fail with
# "error setting rlimit ... operation not permitted": containers get the host's own hard limits
# (nproc counts every process of a uid on the host, root's included, so not less). crun refuses
# the hybrid cgroup layout ("cgroups in hybrid mode not supported"): runc. No systemd: cgroupfs,
# events and logs to files, and no healthcheck timers (.ci/containers.sh runs the checks).
# (nproc above 32768 is refused as well, whatever the host's limit: "error setting rlimit type 6".)
OPCO_CI_CACHE="${OPCO_PROXY_CACHE:-$HOME/.cache/opco-proxy}"
OPCO_CI_PODMAN_DIR="$OPCO_CI_CACHE/containers"
OPCO_CI_PODMAN_RUN=/run/opco-proxy-ci
mkdir -p "$OPCO_CI_PODMAN_DIR/networks" "$OPCO_CI_PODMAN_RUN"
OPCO_CI_NPROC="$(ulimit -Hu)"
[ "$OPCO_CI_NPROC" != unlimited ] && [ "$OPCO_CI_NPROC" -le 32768 ] || OPCO_CI_NPROC=32768
OPCO_CI_NOFILE="$(ulimit -Hn)"
[ "$OPCO_CI_NOFILE" != unlimited ] && [ "$OPCO_CI_NOFILE" -le 65536 ] || OPCO_CI_NOFILE=65536
cat >"$OPCO_CI_PODMAN_DIR/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$OPCO_CI_NOFILE:$OPCO_CI_NOFILE", "nproc=$OPCO_CI_NPROC:$OPCO_CI_NPROC"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$OPCO_CI_PODMAN_RUN/tmp"

[network]
network_backend = "netavark"
network_config_dir = "$OPCO_CI_PODMAN_DIR/networks"
EOF
cat >"$OPCO_CI_PODMAN_DIR/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$OPCO_CI_PODMAN_DIR/storage"
runroot = "$OPCO_CI_PODMAN_RUN/runroot"
EOF
export CONTAINERS_CONF="$OPCO_CI_PODMAN_DIR/containers.conf"
export CONTAINERS_STORAGE_CONF="$OPCO_CI_PODMAN_DIR/storage.conf"
export CONTAINERS_REGISTRIES_CONF="$OPCO_CI_PODMAN_DIR/registries.conf"
# No registry is reachable: short names resolve to docker.io without asking, and nothing is pulled.
printf 'unqualified-search-registries = ["docker.io"]\nshort-name-mode = "permissive"\n' >"$CONTAINERS_REGISTRIES_CONF"
