"""The suite layer: scenarios, their steps and expectations, and the model of SPEC.md."""
