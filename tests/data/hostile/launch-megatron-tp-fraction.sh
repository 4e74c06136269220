#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 4.5
