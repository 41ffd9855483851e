/*
 * The experiment keys' names as numbers: one id per row of the key table
 * (exp.c), in its order, and the columns that identify a row without
 * being a key. The models and their checks name the keys they blame a
 * failure on by these ids, so they need this list and not the table.
 */
#ifndef BN_KEYID_H
#define BN_KEYID_H

typedef enum {
    KEY_DESCRIPTION, KEY_TABLE, KEY_OUTPUTS,
    KEY_ROWS, KEY_POP_SEED, KEY_FEATURE, KEY_POP_CLASSES,
    KEY_POP_LABEL_NOISE, KEY_POP_FILE, KEY_POP_LABEL, KEY_POP_GROUP,
    KEY_HOLDOUT, KEY_HOLDOUT_SEED,
    KEY_MAPS_IMAGE, KEY_MAPS_FILTERS, KEY_MAPS_KERNEL, KEY_MAPS_SIZE,
    KEY_MAPS_SAMPLES, KEY_MAPS_CHANNEL, KEY_MAPS_SEED,
    KEY_EVAL_SHIFT, KEY_EVAL_SCALE, KEY_EVAL_OFFSET, KEY_EVAL_FILE,
    KEY_MODEL, KEY_HIDDEN, KEY_NORM, KEY_FREEZE_AFTER, KEY_LR,
    KEY_SGD_MOMENTUM, KEY_WEIGHT_DECAY, KEY_INIT_SEED,
    KEY_LAYERS, KEY_DEPTH, KEY_DTYPE, KEY_OPTIMIZER, KEY_ADAM_BETA1, KEY_ADAM_BETA2,
    KEY_ADAM_EPS, KEY_WARMUP, KEY_SCHEDULE, KEY_STEP_EPOCHS, KEY_STEP_FACTOR,
    KEY_GAMMA, KEY_BETA, KEY_EPS, KEY_MOMENTUM, KEY_WEIGHTS, KEY_VARIANCE,
    KEY_ESTIMATOR, KEY_LAYER_INITIAL, KEY_DEVICES, KEY_SYNC,
    KEY_BATCH_SIZE, KEY_ORDER, KEY_SEED, KEY_EPOCHS, KEY_PARTIAL,
    KEY_PRECISE, KEY_DRIFT, KEY_DRIFT_SIZE,
    KEY_COMPOSITIONS, /* issue 24, batch dependence */
    KEY_SEQ_LENGTH, KEY_SEQ_MIN_LENGTH, KEY_SEQ_MASK, KEY_SEQ_FILE, /* sequences */
    /* Columns that identify a row without being a key of the file. */
    KEY_EXPERIMENT, KEY_POPULATION, KEY_NEW_WEIGHT,
    KEY_COUNT
} key_id;

#endif
