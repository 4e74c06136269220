#!/bin/bash
python3 MaxText/train.py MaxText/configs/base.yml per_device_batch_size=1e12
