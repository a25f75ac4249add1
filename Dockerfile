# opco-proxy container image (docs/operations.md). One image for every process role:
#   docker run IMAGE            -> serve (HTTP API and workers) with /etc/opco-proxy/config.json
#   docker run IMAGE api|worker|hub [--config FILE], IMAGE config check FILE, IMAGE --help
# Config comes from a mounted file, secrets from the environment (docs/configuration.md).
# .ci/image-check.sh runs this image's tree, start command and HEALTHCHECK without Docker.

# Build: every dependency, the TypeScript build, then the runtime tree (deploy/image-tree.mjs):
# each workspace package as npm pack makes it, without sources, tests or test-only packages.
FROM node:24-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
 && npm run build \
 && node deploy/image-tree.mjs /app

# Runtime: the tree and its production dependencies only, run as the unprivileged `node` user.
FROM node:24-slim
# HOST: in a container the service is reached through its published port, never on loopback
# (it wins over the file's `host`; `demo` listens there too).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    OPCO_PROXY_CONFIG=/etc/opco-proxy/config.json
WORKDIR /app
COPY --from=build /app ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force \
 && mkdir -p /etc/opco-proxy /var/lib/opco-proxy \
 && chown node:node /var/lib/opco-proxy
USER node
EXPOSE 8080
# The HTTP roles answer /health on PORT; the worker role has no HTTP (compose turns this off for it).
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "server/dist/src/cli.js"]
CMD ["serve"]
