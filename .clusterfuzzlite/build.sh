#!/bin/bash -eu
# Builds every fuzz target for ClusterFuzzLite/OSS-Fuzz. The base image sets
# RUSTFLAGS/SANITIZER; cargo fuzz applies the sanitizer the infrastructure asks for.
# Each JSON-text target ships with the event-type dictionary ($OUT/<target>.dict, picked
# up automatically), each target with its committed seed corpus
# ($OUT/<target>_seed_corpus.zip) and, where one exists, fuzz/options/<target>.options.
cd "$SRC/loom-conformance/fuzz"
cargo fuzz build -O --debug-assertions
release="target/x86_64-unknown-linux-gnu/release"
for target in $(cargo fuzz list); do
  cp "$release/$target" "$OUT/"
  # The structured targets read event records, not text: no dictionary; their
  # options file sets max_len to the model's longest meaningful input.
  case "$target" in
    *_structured) ;;
    *) cp dicts/events.dict "$OUT/$target.dict" ;;
  esac
  if [ -f "options/$target.options" ]; then
    cp "options/$target.options" "$OUT/$target.options"
  fi
  if compgen -G "corpus/$target/*" > /dev/null; then
    zip -q -j "$OUT/${target}_seed_corpus.zip" corpus/"$target"/*
  fi
done
