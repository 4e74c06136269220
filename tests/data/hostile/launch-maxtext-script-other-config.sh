#!/bin/bash
python3 MaxText/train.py configs/mine.yml steps=3
