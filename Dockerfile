# One image for every llmgw process: `docker run IMAGE gateway|worker|agent|...`.
# The build stage installs dependencies, generates the Prisma client and the gRPC types, and
# compiles the TypeScript into dist/ (scripts/build.sh), which bin/llmgw.js runs, and the web
# console into dist/console.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CI=true NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_FUND=false NPM_CONFIG_AUDIT=false
COPY package.json package-lock.json ./
# package.json's prepare (generate, compile) waits for the sources, copied below: it skips itself here.
RUN npm ci
# Sources only, listed one by one so that local state (.data/, node_modules/, generated code)
# never reaches the image even without a .dockerignore.
COPY tsconfig.json tsconfig.build.json prisma.config.ts cli.ts ./
COPY bin/ bin/
COPY scripts/ scripts/
COPY proto/ proto/
COPY prisma/ prisma/
COPY common/ common/
COPY gateway/ gateway/
COPY workers/ workers/
COPY workflows/ workflows/
COPY activities/ activities/
COPY agent/ agent/
COPY ctl/ ctl/
COPY doctor/ doctor/
COPY launcher/ launcher/
# The web console's sources: scripts/build.sh builds them into dist/console with Vite.
COPY console/ console/
RUN rm -rf common/generated \
 && bash scripts/gen.sh \
 && bash scripts/build.sh \
 && npm prune --omit=dev

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    LLMGW_DATA_DIR=/var/lib/llmgw \
    LLMGW_HOST=0.0.0.0 \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
RUN mkdir -p /var/lib/llmgw && chown node:node /var/lib/llmgw
COPY --from=build --chown=root:root /app /app
# The image's own unprivileged user (uid 1000); the sources stay root-owned and read-only to it.
USER node
VOLUME ["/var/lib/llmgw"]
# client API, admin API, metrics, control gRPC (gateway); worker metrics; agent gRPC, agent metrics
EXPOSE 8080 8081 9091 7071 9092 7070 9093
ENTRYPOINT ["sh", "bin/docker-entrypoint.sh"]
CMD ["gateway"]
