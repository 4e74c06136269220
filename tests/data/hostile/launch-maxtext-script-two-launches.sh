#!/bin/bash
python3 MaxText/train.py MaxText/configs/base.yml steps=1
python3 MaxText/train.py MaxText/configs/base.yml steps=2
