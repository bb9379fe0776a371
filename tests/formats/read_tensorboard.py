"""Prints every scalar TensorBoard's own reader finds in a log directory, one per line:
`<tag> <step> <value>` (value as Python's repr, so NaN prints as "nan").

Used by tests/formats/tensorboard_writer_test.cpp to prove TensorBoard reads trainer's event files.
"""
import sys

from tensorboard.backend.event_processing import event_accumulator


def main(directory):
    # size_guidance 0 keeps every scalar instead of a reservoir sample.
    accumulator = event_accumulator.EventAccumulator(
        directory, size_guidance={event_accumulator.SCALARS: 0})
    accumulator.Reload()
    for tag in sorted(accumulator.Tags()[event_accumulator.SCALARS]):
        for event in accumulator.Scalars(tag):
            print(tag, event.step, repr(float(event.value)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: read_tensorboard.py <log directory>")
    main(sys.argv[1])
