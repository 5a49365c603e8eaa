#!/usr/bin/env bash
# A fleet of GPUs through the scheduler the cluster already has: one array task per GPU, each
# running the study on the GPU Slurm gave it and writing its own folder. Afterwards `clvscu
# report ROOT` (or `clvscu plot ROOT`) takes the whole tree and draws one per-GPU chart.
#
#   sbatch --array=0-7 --gpus-per-task=1 scripts/slurm-array.sh STUDY ROOT [BINARY]
#
# Each task's folder is ROOT/<host>-gpu<local id>-task<array id>: unique per node and GPU,
# so tasks never write into one another's folder (clvscu also locks a folder it writes).
#SBATCH --job-name=clvscu
#SBATCH --ntasks=1
#SBATCH --gpus-per-task=1
#SBATCH --output=clvscu-%A_%a.log
set -euo pipefail
study="${1:?usage: slurm-array.sh STUDY ROOT [BINARY]}"
root="${2:?usage: slurm-array.sh STUDY ROOT [BINARY]}"
bin="${3:-clvscu}"
# Slurm restricts the task to its GPU through CUDA_VISIBLE_DEVICES, so inside the task that
# GPU is CUDA device 0; its OpenCL twin is found by the PCI bus (--cuda-device all over the
# one visible GPU), never by index.
task="${SLURM_ARRAY_TASK_ID:-0}"
gpu="${CUDA_VISIBLE_DEVICES:-0}"
out="$root/$(hostname -s)-gpu${gpu//,/_}-task$task"
mkdir -p "$root"
exec "$bin" run --study "$study" --cuda-device all --out "$out" --no-plot
