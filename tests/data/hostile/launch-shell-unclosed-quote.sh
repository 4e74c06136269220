#!/bin/bash
TP='8
torchrun pretrain_gpt.py --tensor-model-parallel-size $TP
