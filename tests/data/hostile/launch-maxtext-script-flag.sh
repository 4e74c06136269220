#!/bin/bash
python3 MaxText/train.py MaxText/configs/base.yml --steps 30
