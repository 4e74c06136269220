#!/bin/bash
python3 MaxText/train.py MaxText/configs/base.yml int8_training=true
