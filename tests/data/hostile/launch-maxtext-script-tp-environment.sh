#!/bin/bash
python3 MaxText/train.py MaxText/configs/base.yml ici_tensor_parallelism=$TP
