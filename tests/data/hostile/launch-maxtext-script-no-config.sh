#!/bin/bash
python3 MaxText/train.py per_device_batch_size=2
