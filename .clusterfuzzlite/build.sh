#!/bin/bash -eu
# Builds every fuzz target for ClusterFuzzLite/OSS-Fuzz. The base image sets
# RUSTFLAGS/SANITIZER; cargo fuzz applies the sanitizer the infrastructure asks for.
# Each target ships with the event-type dictionary ($OUT/<target>.dict, picked up
# automatically) and its committed seed corpus ($OUT/<target>_seed_corpus.zip).
cd "$SRC/loom-conformance/fuzz"
cargo fuzz build -O --debug-assertions
release="target/x86_64-unknown-linux-gnu/release"
for target in $(cargo fuzz list); do
  cp "$release/$target" "$OUT/"
  cp dicts/events.dict "$OUT/$target.dict"
  if compgen -G "corpus/$target/*" > /dev/null; then
    zip -q -j "$OUT/${target}_seed_corpus.zip" corpus/"$target"/*
  fi
done
