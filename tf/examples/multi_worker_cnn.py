"""One worker of the example CNN's MultiWorkerMirroredStrategy training (ring collectives).

Every worker runs this same script; TF_CONFIG says who is in the cluster and which worker this one is:

    TF_CONFIG='{"cluster": {"worker": ["host0:port", "host1:port"]}, "task": {"type": "worker", "index": 0}}' \
        python tf/examples/multi_worker_cnn.py --out-dir=DIR

(launch_multi_worker.py starts N of them on 127.0.0.1.) Each worker writes DIR/worker<index>.npz (its final
weights) and DIR/worker<index>.json (its losses and gradrt's kernel counts).
"""
import argparse
import json
import os

import numpy as np

import digits_cnn


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--kernels", choices=("gradrt", "tf"), default="gradrt")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--global-batch", type=int, default=64, help="split evenly over the workers")
    ap.add_argument("--threads", type=int, default=1, help="TensorFlow intra-op threads per worker")
    args = ap.parse_args()

    tf_config = json.loads(os.environ["TF_CONFIG"])
    index = tf_config["task"]["index"]
    tf, gradrt_tf = digits_cnn.import_tensorflow(args.kernels, args.threads)
    # The strategy configures this worker's collective ops: before TensorFlow runs any op (so before
    # gradrt_tf.load(), which runs one).
    ring = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=ring)
    if gradrt_tf:
        gradrt_tf.load()
    tf.keras.utils.set_random_seed(digits_cnn.SEED)

    x, y = digits_cnn.load_digits()
    workers = strategy.num_replicas_in_sync  # one CPU replica per worker
    # Each worker reads its own shard, repeated, for the same steps_per_epoch on every worker: a worker
    # that ran out of data early would leave the others waiting in that step's collectives.
    steps = len(y) // workers // (args.global_batch // workers)

    def dataset_fn(context):
        per_worker = context.get_per_replica_batch_size(args.global_batch)
        data = tf.data.Dataset.from_tensor_slices((x.astype("float32"), y))
        data = data.shard(context.num_input_pipelines, context.input_pipeline_id)
        return data.batch(per_worker, drop_remainder=True).repeat()

    with strategy.scope():
        model = digits_cnn.build_model()  # seeded weights; the strategy also broadcasts worker 0's
        digits_cnn.compile_model(model)
    losses = []
    history = model.fit(tf.keras.utils.experimental.DatasetCreator(dataset_fn), epochs=args.epochs,
                        steps_per_epoch=steps, verbose=0, callbacks=[digits_cnn.loss_recorder(losses)])
    # A collective too (batch norm's moving statistics are read as the mean over workers): every worker
    # calls it.
    weights = model.get_weights()
    calls = dict(gradrt_tf.kernel_calls()) if gradrt_tf else {}

    os.makedirs(args.out_dir, exist_ok=True)
    np.savez(os.path.join(args.out_dir, f"worker{index}.npz"), *weights)
    with open(os.path.join(args.out_dir, f"worker{index}.json"), "w") as f:
        json.dump({"index": index, "workers": workers, "step_losses": losses,
                   "epoch_losses": history.history["loss"], "kernel_calls": calls}, f)
    print(f"worker {index}/{workers}: epoch losses " + " ".join(f"{v:.6f}" for v in history.history["loss"]))


if __name__ == "__main__":
    main()
