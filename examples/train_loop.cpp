// The README's training-loop example, built and run by CTest so the README stays true.
#include <iostream>
#include <memory>

#include "ember/ember.h"

int main() {
  using namespace ember;
  manual_seed(0);
  data::Dataset spirals = data::make_spirals();     // 3 classes x 300 points
  Tensor x = spirals.images.reshape({-1, 2});        // [900, 2] f32
  Tensor y = spirals.labels;                         // [900] i64

  auto net = std::make_shared<nn::Sequential>(nn::Linear(2, 64), nn::ReLU(), nn::Linear(64, 3));
  optim::SGD sgd(net->parameters(), optim::SgdOptions(0.5).momentum(0.9));

  for (int step = 0; step < 300; ++step) {
    Tensor logits = net->forward(x);
    Tensor loss = cross_entropy(logits, y);
    sgd.zero_grad();
    loss.backward();
    sgd.step();
    if (step % 50 == 0)
      std::cout << "step " << step << "  loss " << loss.item<float>()
                << "  accuracy " << models::accuracy(logits, y) << "\n";
  }
}
