"""boto3 `bedrock-runtime`, `converse_stream`: each `contentBlockStart` toolUse opens a call,
its `contentBlockDelta` toolUse `input` strings are appended, `contentBlockStop` hands it on
(botocore's event-stream parser under it), pointed at the harness by `endpoint_url` with
dummy credentials."""

import os

import boto3
from accumulator import emit
from botocore.config import Config
from loop import each_case

os.environ.setdefault("AWS_ACCESS_KEY_ID", "lab-dummy")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "lab-dummy")
_SESSION = boto3.Session()  # one per process: loading the service model is its start-up


def main() -> None:
    client = _SESSION.client("bedrock-runtime", region_name="us-east-1",
                             endpoint_url=os.environ["STREAMCALLS_BASE_URL"],
                             config=Config(retries={"total_max_attempts": 1}))
    response = client.converse_stream(modelId="streamcalls-lab", messages=[
        {"role": "user", "content": [{"text": "go"}]}])
    open_calls: dict[int, dict] = {}
    for event in response["stream"]:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"].get("toolUse")
            if use is not None:
                open_calls[start["contentBlockIndex"]] = {**use, "input": ""}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            call = open_calls.get(delta["contentBlockIndex"])
            if call is not None and "toolUse" in delta["delta"]:
                call["input"] += delta["delta"]["toolUse"]["input"]
        elif "contentBlockStop" in event:
            call = open_calls.pop(event["contentBlockStop"]["contentBlockIndex"], None)
            if call is not None:
                emit(call["toolUseId"], call["name"], args=call["input"])


if __name__ == "__main__":
    each_case(main)
