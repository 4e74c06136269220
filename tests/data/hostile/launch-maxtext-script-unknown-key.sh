#!/bin/bash
python3 MaxText/train.py MaxText/configs/base.yml use_magic=true steps=3 also_magic=1
