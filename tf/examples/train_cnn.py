"""Trains the example CNN (digits_cnn.py) with tf-keras model.fit on one process.

    python tf/examples/train_cnn.py                      # gradrt's kernels (gradrt_tf installed)
    python tf/examples/train_cnn.py --kernels=tf         # TensorFlow's own kernels, same seeded run
    python tf/examples/train_cnn.py --json=run.json      # also writes losses and gradrt's kernel counts

Same seeds, same data order, same initial weights in every run, so two runs differ only in the
kernels (and dtype) chosen here.
"""
import argparse
import json

import digits_cnn


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", choices=("gradrt", "tf"), default="gradrt")
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1, help="TensorFlow intra-op threads")
    ap.add_argument("--json", help="write losses and kernel counts here")
    args = ap.parse_args()

    tf, gradrt_tf = digits_cnn.import_tensorflow(args.kernels, args.threads)
    if gradrt_tf:
        gradrt_tf.load()
    tf.keras.utils.set_random_seed(digits_cnn.SEED)
    x, y = digits_cnn.load_digits()
    data = tf.data.Dataset.from_tensor_slices((x.astype(args.dtype), y)).batch(args.batch)
    model = digits_cnn.build_model(args.dtype)
    digits_cnn.compile_model(model)
    losses = []
    history = model.fit(data, epochs=args.epochs, shuffle=False, verbose=0,
                        callbacks=[digits_cnn.loss_recorder(losses)])
    calls = dict(gradrt_tf.kernel_calls()) if gradrt_tf else {}
    accuracy = float((model.predict(x.astype(args.dtype), verbose=0).argmax(1) == y).mean())

    print(f"{args.kernels} kernels, {args.dtype}: epoch losses "
          + " ".join(f"{v:.6f}" for v in history.history["loss"]) + f", training accuracy {accuracy:.3f}")
    if gradrt_tf:
        print("gradrt kernel calls: " + ", ".join(f"{k} {v}" for k, v in sorted(calls.items())))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kernels": args.kernels, "dtype": args.dtype, "step_losses": losses,
                       "epoch_losses": history.history["loss"], "accuracy": accuracy, "kernel_calls": calls}, f)


if __name__ == "__main__":
    main()
