#pragma once
// A data-parallel run's training checkpoint (train/training_checkpoint.h): one file per rank,
// each that rank's whole Trainer state (its own shard of the optimizer state under ZeRO), and
// on resuming the generation every rank holds. train::fit uses these when its Trainer is
// data-parallel.
//
//   train::save_rank_checkpoint("run.ckpt", group, trainer, at, metadata);
//   // rank 0 writes run.ckpt, rank r run.ckpt.rank<r>; each first moves its last one to
//   // <file>.previous
//   train::TrainingCheckpoint c = train::read_rank_checkpoint("run.ckpt", group);  // the same step on every rank
//
// Why two generations: the ranks save at the same point of the run but not at the same
// moment, so a job that dies while saving (a rank killed, a machine lost) can leave rank 0's
// file at step k and rank 1's at step k - 1. Each rank moves its last file aside (an atomic
// rename) before writing the next (atomically too: data/safetensors.h), so every rank always
// holds step k - 1 or k, and reading, the ranks agree on the newest step all of them hold.
// (Ranks cannot be more than one save apart: the training steps between two saves wait for
// every rank's gradients.)
#include <string>

#include "dist/process_group.h"
#include "train/training_checkpoint.h"

namespace ember::train {

// Rank 0's file is `path` (a weights file like any other: ember eval --load reads it); rank r's
// is "<path>.rank<r>".
std::string rank_checkpoint_path(const std::string& path, int rank);

void save_rank_checkpoint(const std::string& path, dist::ProcessGroup& group, const Trainer& trainer,
                          const TrainingPosition& position, const data::SafetensorsMetadata& metadata);

// Every rank calls it. Reads this rank's file and its previous one, and returns the one of the
// newest step every rank holds; throws on every rank, naming each rank's steps, when there is
// none.
TrainingCheckpoint read_rank_checkpoint(const std::string& path, dist::ProcessGroup& group);

}  // namespace ember::train
