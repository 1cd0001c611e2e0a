#!/usr/bin/env python3
"""A prefix-heavy request file for `ridge batch`: N chat requests that share one long system prompt
(a travel company's policies, ~200 tokens) and differ in a short question. Run it with and without
prefix caching to see the hit rate and the prefill time saved:

    python3 bench/prefix_workload.py > prefix.jsonl
    build/ridge batch -i prefix.jsonl -o /dev/null --max-num-seqs 8 -t 2
    build/ridge batch -i prefix.jsonl -o /dev/null --max-num-seqs 8 -t 2 --no-prefix-caching
"""
import argparse
import json

SYSTEM = ("You are a meticulous assistant for a travel company. Answer in two sentences, cite the relevant policy, "
          "never invent prices, and always end with a short friendly sign-off. Policies: refunds within 30 days; "
          "changes allowed up to 48 hours before departure; pets travel in cabin under 8 kg; ") * 3
QUESTIONS = ["Can I bring my cat?", "How do I get a refund?", "Can I change my flight tomorrow?",
             "What is the baggage limit?", "Do you offer student discounts?", "Is breakfast included?",
             "Can I cancel a hotel booking?", "Where is my ticket?"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--requests", type=int, default=48)
    ap.add_argument("--max-tokens", type=int, default=16)
    args = ap.parse_args()
    for i in range(args.requests):
        messages = [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": f"{QUESTIONS[i % len(QUESTIONS)]} (request {i})"}]
        print(json.dumps({"id": i, "messages": messages, "max_tokens": args.max_tokens}))


if __name__ == "__main__":
    main()
