# Megatron-LM arguments for deepseek-v3 on 256 x h100-sxm (dgx-h100), written by parplan 0.1.0.
# Predicted: peak 69.2 GiB per GPU (fits), 448102 tokens/s, MFU 24.9%.
# Use: source this file, then
#   torchrun ... pretrain_gpt.py "${MEGATRON_ARGS[@]}" --data-path ... --tokenizer-type ... --save ... --load ...
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
MEGATRON_ARGS=(
  # parallelism: 256 GPUs = dp 4 x tp 2 x pp 16 x cp 2
  --tensor-model-parallel-size 2
  --pipeline-model-parallel-size 16
  --pipeline-model-parallel-layout 'Et*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*3|t*2L'
  --sequence-parallel
  --context-parallel-size 2
  --cp-comm-type p2p
  --expert-model-parallel-size 16
  --expert-tensor-parallel-size 1
  --use-distributed-optimizer
  --overlap-grad-reduce
  --overlap-param-gather
  --tp-comm-overlap
  # batch: 4096 sequences per step = micro-batch 1 x 1024 micro-batches x dp 4
  --micro-batch-size 1
  --global-batch-size 4096
  # model: deepseek-v3
  --num-layers 61
  --hidden-size 7168
  --ffn-hidden-size 18432
  --num-attention-heads 128
  --seq-length 4096
  --max-position-embeddings 4096
  --position-embedding-type yarn
  --rotary-base 10000
  --rotary-scaling-factor 40
  --yarn-original-max-position-embeddings 4096
  --normalization RMSNorm
  --norm-epsilon 1e-06
  --swiglu
  --untie-embeddings-and-output-weights
  --disable-bias-linear
  --attention-dropout 0
  --hidden-dropout 0
  --multi-latent-attention
  --q-lora-rank 1536
  --kv-lora-rank 512
  --qk-head-dim 128
  --qk-pos-emb-head-dim 64
  --v-head-dim 128
  --num-experts 256
  --moe-router-topk 8
  --moe-ffn-hidden-size 2048
  --moe-shared-expert-intermediate-size 2048
  --moe-grouped-gemm
  --moe-layer-freq '([0]*3+[1]*58)'
  --moe-token-dispatcher-type flex
  --moe-flex-dispatcher-backend hybridep
  --make-vocab-size-divisible-by 128
  # precision and memory
  --bf16
  --fp8-format hybrid
  --fp8-recipe tensorwise
  --recompute-granularity selective
  --recompute-modules mlp moe_act layernorm mla_up_proj
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
)
