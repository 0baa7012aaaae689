# Megatron-DeepSpeed arguments for gpt3-175b on 1024 x a100-80g (dgx-a100-80g), written by parplan 0.1.0.
# Predicted: peak 26.4 GiB per GPU (fits), 150730 tokens/s, MFU 50.8%.
# Use: source this file, then
#   torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" --data-path ... --tokenizer-type ... --save ... --load ...
MEGATRON_ARGS=(
  # parallelism: 1024 GPUs = dp 16 x tp 8 x pp 8 x cp 1
  --tensor-model-parallel-size 8
  --pipeline-model-parallel-size 8
  --sequence-parallel
  # batch: 1536 sequences per step = micro-batch 1 x 96 micro-batches x dp 16
  --micro-batch-size 1
  --global-batch-size 1536
  # model: gpt3-175b
  --num-layers 96
  --hidden-size 12288
  --ffn-hidden-size 49152
  --num-attention-heads 96
  --seq-length 2048
  --max-position-embeddings 2048
  --layernorm-epsilon 1e-05
  --attention-dropout 0
  --hidden-dropout 0
  --make-vocab-size-divisible-by 128
  # precision and memory
  --bf16
  --use-flash-attn-v2
  # optimizer and schedule
  --optimizer adam
  --adam-beta1 0.9
  --adam-beta2 0.95
  --adam-eps 1e-08
  --weight-decay 0.1
  --clip-grad 1
  --lr 0.0003
  --min-lr 0
  --lr-decay-style linear
  --lr-warmup-iters 2000
  --train-iters 100000
  # DeepSpeed (the JSON decides the ZeRO stage; keep the flag equal)
  --deepspeed
  --deepspeed_config 'ds_config.json'
  --zero-stage 1
)
