/*
 * fuzz_target: the one function each fuzz target defines, with libFuzzer's
 * signature (AFL++'s driver and fuzz_replay_main.c call the same one).
 */
#ifndef KSIM_FUZZ_TARGET_H
#define KSIM_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input; returns 0 (libFuzzer's convention: the input was used). An
 * input that breaks the code under test aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
