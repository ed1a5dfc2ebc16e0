# Multi-stage Debian 12 build of the meshop binary.
FROM debian:12 AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config git ca-certificates \
      libboost1.81-dev libssl-dev rapidjson-dev libyaml-dev libcli11-dev libre2-dev \
      prometheus-cpp-dev \
      golang-go python3 python3-yaml \
    && rm -rf /var/lib/apt/lists/*
# The build fetches the bundled Istio chart sets (manifests/versions.yaml) from the Go module
# proxy: hack/chart-sets.sh runs `go mod download` (network needed in this stage).
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DMESHOP_BUILD_TESTS=OFF -DMESHOP_BUILD_BENCHMARKS=OFF \
    && cmake --build /build --target meshop -j 2 \
    && strip /build/operator/meshop

FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      ca-certificates libssl3 libyaml-0-2 libre2-9 libprometheus-cpp-core1.0 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/operator/meshop /usr/local/bin/meshop
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/meshop"]
CMD ["run"]
