# A container image with `loom` as its entrypoint, for teams that run harnesses in
# containers: docker build -t loom-conform:0.1.0 . ; docker run --rm -v "$PWD:/work"
# -w /work loom-conform:0.1.0 conform --store memory
# The image holds loom only: an adapter that needs Node or Python needs an image of your
# own FROM this one with that runtime added. tests/packaging.rs checks these steps
# against the workspace locally; the image itself is built where docker is.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin loom

FROM debian:bookworm-slim
COPY --from=build /src/target/release/loom /usr/local/bin/loom
WORKDIR /work
ENTRYPOINT ["loom"]
CMD ["--help"]
