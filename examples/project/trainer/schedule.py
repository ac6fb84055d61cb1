"""A cosine learning-rate schedule."""
import math


def learning_rates(base, steps):
    return [base * 0.5 * (1 + math.cos(math.pi * i / steps)) for i in range(steps)]
